"""Checkpoints of finished query batches, so an interrupted extraction resumes where it stopped.

A batch is one rendered query (a query name plus its validated ids and parameters). When its
result comes back it is written to ``<folder>/<query name>/<key>.json`` through a temporary
file and an atomic rename, so a crash leaves either the whole batch or nothing. The key is
a hash of the query name, the full query text and the endpoint: a batch is reused only for
the very same query against the same endpoint, never for a changed one.

A resumed run recomputes the same batches in the same order (they depend only on the seeds
and on earlier results), finds the finished ones here, and queries only the rest: nothing
is repeated and nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from taxoforge.files import write_text_atomic

__all__ = ["BatchCheckpoint", "batch_key"]


def batch_key(query_name: str, query_text: str, endpoint: str) -> str:
    """The key of one batch's answer: a hash of the query's name, the endpoint and the query's text.

    Parameters
    ----------
    query_name : str
        The query's name.
    query_text : str
        The rendered query.
    endpoint : str
        The SPARQL endpoint's URL.

    Returns
    -------
    str
        32 hex digits.
    """
    h = hashlib.sha256()
    for part in (query_name, endpoint, query_text):
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()[:32]


class BatchCheckpoint:
    """A folder of finished batches (see the module docstring).

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.
    """

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.writes = 0

    def _path(self, query_name: str, key: str) -> Path:
        return self.folder / query_name / f"{key}.json"

    def get(self, query_name: str, key: str) -> dict | None:
        """The stored answer of one batch, or None when there is none (or it is unreadable).

        Parameters
        ----------
        query_name : str
            The query's name.
        key : str
            The batch's key (:func:`batch_key`).

        Returns
        -------
        dict or None
            The stored document.
        """
        p = self._path(query_name, key)
        if not p.exists():
            return None
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{p}: unreadable checkpoint ({e}); delete it to query the batch again") from e
        if doc.get("key") != key or "rows" not in doc:
            raise ValueError(f"{p}: not a checkpoint of batch {key} (expected keys 'key' and 'rows')")
        self.hits += 1
        return doc

    def put(self, query_name: str, key: str, doc: dict) -> Path:
        """Store the answer of one batch (written to a temporary file, then renamed).

        Parameters
        ----------
        query_name : str
            The query's name.
        key : str
            The batch's key (:func:`batch_key`).
        doc : dict
            The answer to store.

        Returns
        -------
        pathlib.Path
            The file written.
        """
        p = self._path(query_name, key)
        write_text_atomic(p, json.dumps({**doc, "key": key}, ensure_ascii=False, sort_keys=True))
        self.writes += 1
        return p

    def count(self) -> int:
        """How many batch answers the checkpoint holds.

        Returns
        -------
        int
            The number of stored batches.
        """
        return sum(1 for _ in self.folder.glob("*/*.json"))
