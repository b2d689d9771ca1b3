"""Content-keyed memo tables: the per-text results of a pure computation, kept across calls.

A scoring call maps and measures each distinct answer of its file once; the next call on
the same file — the researcher's loop: score, look, change a prompt, score again — asks for
nearly the same answers. A :class:`ContentMemo` keeps one table per computation and **key**
in the cache folder (``$TAXOFORGE_CACHE_DIR/memo/<kind>-<digest of the key>.parquet``,
:func:`taxoforge.files.default_cache_dir`): one row per distinct input (its key columns)
with the results (the other columns). The key names everything the results depend on — the
content digests of the inputs that are not in the rows (a tree's names, a synonym table),
the configuration, the versions of the libraries that compute them and a fingerprint of the
source of the code that computes them (:func:`source_fingerprint`) — so a changed tree, option
or rule never reads an old table: it reads another one, or none.

**Trust.** The cache folder may be shared or written by others, so a table is used only
when the SHA-256 of the bytes read is the digest this user's runs recorded when they wrote
it (:class:`taxoforge.files.trusted.TrustedDigests`, kind ``memo``, a private folder, never
beside the table); the bytes verified are the bytes parsed. A table that is not (edited,
written by someone else, truncated) is ignored: the results are computed again and the
table written anew. A cache folder that cannot be written costs only the speed.

**Size.** A table keeps at most ``max_rows`` rows: when this call's rows would make it
larger, it keeps this call's rows only.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

from taxoforge.files.atomic import write_bytes_atomic
from taxoforge.files.paths import NotARegularFile, default_cache_dir, open_regular
from taxoforge.files.trusted import TrustedDigests

__all__ = ["ContentMemo", "source_fingerprint", "inputs_digest", "MEMO_MAX_ROWS", "MEMO_MAX_BYTES"]

#: rows a memo table keeps at most (a few hundred MB of answers at most, read in a second)
MEMO_MAX_ROWS = 2_000_000
#: bytes a memo table is read up to (a larger file is not one this code wrote within max_rows)
MEMO_MAX_BYTES = 1 << 30
_FORMAT = 1


def source_fingerprint(*paths: str | os.PathLike) -> str:
    """SHA-256 of the contents of ``paths`` (files, or folders: every file directly in them,
    by name), in order — what a memo's key says of the code that computes its results.

    Parameters
    ----------
    *paths : path-like
        Source files or folders.

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256()
    for p in paths:
        p = Path(p)
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix != ".pyc") if p.is_dir() else [p]
        for f in files:
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def inputs_digest(header, *arrays) -> str:
    """SHA-256 of a computation's inputs: ``header`` (JSON: what is computed, its parameters)
    and ``arrays`` (their dtypes, shapes and bytes) — the key of its result in a memo of
    values (:meth:`ContentMemo.json_value`).

    Parameters
    ----------
    header : object
        JSON-able.
    *arrays : numpy.ndarray
        The values computed from.

    Returns
    -------
    str
        The hex digest.
    """
    h = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
    for a in arrays:
        h.update(f"\0{a.dtype.str}{a.shape}\0".encode())
        h.update(a.tobytes(order="C"))
    return h.hexdigest()


class ContentMemo:
    """One memo table (module docstring).

    Parameters
    ----------
    kind : str
        What it holds (``mapping-decisions``, ``text-measures`` …): the file name's prefix.
    key : dict
        Everything the results depend on besides the rows' key columns (JSON-able).
    key_columns : sequence of str
        The columns that identify a row (unique in the table).
    cache_dir : path-like, optional
        The cache folder (default :func:`taxoforge.files.default_cache_dir`).
    max_rows : int, optional
        Rows kept at most (default :data:`MEMO_MAX_ROWS`).
    merge : bool, optional
        True (default): :meth:`save` adds its rows to the stored ones. False: the table is one
        result as a whole (a file read into a table), and :meth:`save` replaces it.
    """

    def __init__(self, kind: str, key: dict, key_columns, cache_dir: str | os.PathLike | None = None,
                 max_rows: int = MEMO_MAX_ROWS, merge: bool = True) -> None:
        self.kind = kind
        self._fields = (dict(key), cache_dir, max_rows, merge)
        self.key_columns = list(key_columns)
        self.key = json.dumps({"format": _FORMAT, "kind": kind, "columns": self.key_columns, **key}, sort_keys=True)
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:32]
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.path = root / "memo" / f"{kind}-{digest}.parquet"
        self.max_rows = max_rows
        self.merge = merge
        self.max_bytes = MEMO_MAX_BYTES
        self._trust = TrustedDigests("memo")
        self._known = None
        self._pending: dict[str, str] = {}

    def sibling(self, kind: str, key_columns) -> ContentMemo:
        """A memo of another computation over the same inputs: the same key, its own table.

        Parameters
        ----------
        kind : str
        key_columns : sequence of str

        Returns
        -------
        ContentMemo
        """
        key, cache_dir, max_rows, merge = self._fields
        return ContentMemo(kind, key, key_columns, cache_dir=cache_dir, max_rows=max_rows, merge=merge)

    def _trust_key(self) -> str:
        return f"{os.path.realpath(self.path)}\0{self.key}"

    def load(self):
        """The stored table when it is the one this user's runs wrote, else None.

        Returns
        -------
        polars.DataFrame or None
        """
        import polars as pl

        if self._known is not None:
            return self._known
        rec = self._trust.record(self._trust_key())
        if rec is None:
            return None
        try:
            with open_regular(self.path, "memo table") as fh:  # a FIFO or device put there: refused, never waited on
                data = fh.read(self.max_bytes + 1)
        except (OSError, NotARegularFile):
            return None
        if len(data) > self.max_bytes:
            return None
        if hashlib.sha256(data).hexdigest() != rec["digest"]:
            return None
        try:
            table = pl.read_parquet(io.BytesIO(data))
        except Exception:  # noqa: BLE001 - a table this user wrote but cannot be read: computed again
            return None
        self._known = table
        return table

    def lookup(self, keys):
        """The stored rows of ``keys`` (a table with the key columns), in their order, with
        a column ``_found``; None when nothing is stored.

        Parameters
        ----------
        keys : polars.DataFrame
            The key columns of the rows wanted.

        Returns
        -------
        polars.DataFrame or None
        """
        import polars as pl

        known = self.load()
        if known is None or known.height == 0 or set(known.columns) < set(self.key_columns):
            return None
        known = known.with_columns(pl.lit(True).alias("_found"))
        out = keys.select(self.key_columns).join(known, on=self.key_columns, how="left", maintain_order="left",
                                                 nulls_equal=True)
        return out.with_columns(pl.col("_found").fill_null(False))

    def save(self, new) -> bool:
        """Add the rows of ``new`` (key columns and results, no key stored yet) and write the
        table atomically, its digest recorded among the trusted ones (without ``merge``, the
        table is ``new`` alone).

        Parameters
        ----------
        new : polars.DataFrame
            Rows computed by this call.

        Returns
        -------
        bool
            Whether it was written.
        """
        import polars as pl

        if new.height == 0:
            return False
        known = self.load() if self.merge else None
        table = new
        if known is not None and known.columns == new.columns and known.schema == new.schema \
                and known.height + new.height <= self.max_rows:
            table = pl.concat([known, new]).unique(self.key_columns, keep="first", maintain_order=True)
        buf = io.BytesIO()
        table.write_parquet(buf, statistics=False)
        data = buf.getvalue()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, data)
        except OSError:
            return False
        self._known = table
        return self._trust.remember(self._trust_key(), [self.path], hashlib.sha256(data).hexdigest())

    def get(self, key: str) -> str | None:
        """The stored ``value`` of ``key`` in a memo of one key column (``key``) and one result
        (``value``, text: a result as JSON), or None.

        Parameters
        ----------
        key : str
            A digest of the inputs.

        Returns
        -------
        str or None
        """
        if key in self._pending:
            return self._pending[key]
        known = self.load()
        if known is None or "key" not in known.columns or "value" not in known.columns:
            return None
        hit = known.filter(known["key"] == key)
        return hit["value"][0] if hit.height else None

    def json_value(self, key: str, compute):
        """The value kept under ``key`` (JSON, decoded), else ``compute()``, put under it.

        Parameters
        ----------
        key : str
            A digest of the inputs (:func:`inputs_digest`).
        compute : callable
            ``compute()`` → a JSON-able value.

        Returns
        -------
        object
        """
        kept = self.get(key)
        if kept is not None:
            return json.loads(kept)
        value = compute()
        self.put(key, json.dumps(value))
        return value

    def put(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` (:meth:`get` finds it at once); :meth:`flush` writes
        what was put, in one write of the table.

        Parameters
        ----------
        key : str
        value : str
        """
        self._pending[key] = value

    def flush(self) -> bool:
        """Write the values :meth:`put` since the last flush.

        Returns
        -------
        bool
            Whether the table was written.
        """
        import polars as pl

        if not self._pending:
            return False
        new = pl.DataFrame({"key": list(self._pending), "value": list(self._pending.values())},
                           schema={"key": pl.String, "value": pl.String})
        self._pending = {}
        return self.save(new)

