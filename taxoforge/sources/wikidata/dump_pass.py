"""One pass over an N-Triples dump: scan the blocks in parallel, keep edges, spill names.

The middle step of :func:`.dump.read_dump`, between the blocks of :mod:`.dump_blocks` and the
graph of :mod:`.dump_graph`.

Per block (one thread per core; the compiled scanner :func:`.dump_scan.scan_block` releases
the GIL)
    the scanner's edges are split into P279 and P31; the rare *odd* lines are classified one
    by one by :func:`.ntriples.classify` (the first bad one is the block's error; edges to
    or from non-items are kept for the report); the names' texts are gathered into an Arrow
    string array (checked as UTF-8 by Arrow, escapes decoded where the scanner saw one), and
    so are the values of the identifier properties asked for; a NUL byte (binary data) and a
    cut last line become the block's error.

In order of the blocks (the collector)
    the line numbers are counted on (so the first error names its file and line), edges are
    appended as ``int64`` arrays, names (and identifier values) go to a :class:`NameStore`: in
    memory up to ``spill_bytes``, then into temporary Arrow IPC files (which names are wanted
    is known only once every edge has been read).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from taxoforge.sources.wikidata.dump_blocks import Block, Blocks
from taxoforge.sources.wikidata.ntriples import PRED_ID, PRED_P279, TRIPLE_RE, LineError, classify, unescape

__all__ = ["Plan", "Scan", "NameStore", "scan_nt", "NAME_SCHEMA", "ID_SCHEMA"]

NAME_SCHEMA = {"q": pl.Int64, "kind": pl.Int8, "lang": pl.Int8, "name": pl.String}
#: Identifier values as the pass keeps them: the item, the property's index among those asked
#: for, the value.
ID_SCHEMA = {"q": pl.Int64, "prop": pl.Int8, "value": pl.String}


@dataclass(frozen=True)
class Plan:
    """What the pass keeps.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    want_p31 : bool
        Keep the P31 edges of the seeds.
    seeds : numpy.ndarray
        The seeds' QID numbers, sorted.
    want_names : bool
        Keep labels and aliases.
    langs : tuple of str
        Their languages.
    lang_table, lang_lens : numpy.ndarray
        The languages for the scanner (:func:`.dump_scan.encode_langs`).
    id_props : numpy.ndarray, optional
        The numbers of the identifier properties whose values are kept (``3151`` for P3151);
        ``None`` for none.
    """

    path: Path
    want_p31: bool
    seeds: np.ndarray
    want_names: bool
    langs: tuple[str, ...]
    lang_table: np.ndarray
    lang_lens: np.ndarray
    id_props: np.ndarray | None = None

    def is_seed(self, q: int) -> bool:
        """Whether a QID number is a seed.

        Parameters
        ----------
        q : int
            A QID number.

        Returns
        -------
        bool
        """
        k = int(np.searchsorted(self.seeds, q))
        return k < len(self.seeds) and int(self.seeds[k]) == q


@dataclass
class _BlockResult:
    """What one block yields (line indexes count from the block's first line)."""

    lines: int
    nbytes: int
    p279: tuple[np.ndarray, np.ndarray]
    p31: tuple[np.ndarray, np.ndarray]
    names: pl.DataFrame | None
    odd_lines: int = 0
    non_items: list[tuple[int, str, str, str]] = field(default_factory=list)  # (line index, subject, object, reason)
    errors: list[tuple[int, str]] = field(default_factory=list)
    deferred: list[tuple[int, int, str]] = field(default_factory=list)  # (QID number, line index, message)
    ids: pl.DataFrame | None = None
    deferred_ids: list[tuple[int, int, str]] = field(default_factory=list)  # the same, of identifier lines


def _scan_block(block: Block, plan: Plan) -> _BlockResult:
    from taxoforge.sources.wikidata.dump_scan import first_nul, scan_block

    buf = block.data
    if block.error:
        return _BlockResult(lines=0, nbytes=0, p279=_EMPTY, p31=_EMPTY, names=None, errors=[(0, block.error)])
    (lines, e_pred, e_child, e_parent, n_q, n_kind, n_lang, n_start, n_end, n_esc, n_line,
     o_line, o_start, o_end, o_pred, i_q, i_prop, i_start, i_end, _) = scan_block(
        buf, plan.want_p31, plan.seeds, plan.want_names, plan.lang_table, plan.lang_lens,
        _NO_PROPS if plan.id_props is None else plan.id_props)  # one compiled signature with or without
    is_279 = e_pred == PRED_P279
    res = _BlockResult(lines=int(lines), nbytes=len(buf), p279=(e_child[is_279], e_parent[is_279]),
                       p31=(e_child[~is_279], e_parent[~is_279]), names=None, odd_lines=len(o_line))
    nul = first_nul(buf)
    if nul >= 0:
        at = int(np.count_nonzero(buf[:nul] == 10))
        start = int(np.flatnonzero(buf[:nul] == 10)[-1]) + 1 if at else 0
        res.errors.append((at, f"binary data: a NUL byte at byte {nul - start + 1} of the line (N-Triples text has "
                               f"none), {bytes(buf[start:start + 80])!r}…"))
    if block.added_newline:
        _check_last_line(buf, int(lines), res)
    extra = _odd_lines(buf, plan, o_line, o_start, o_end, o_pred, res)
    for key in ("P279", "P31"):
        if extra[key]:
            add = np.array(extra[key], dtype=np.int64)
            old = res.p279 if key == "P279" else res.p31
            new = (np.concatenate([old[0], add[:, 0]]), np.concatenate([old[1], add[:, 1]]))
            if key == "P279":
                res.p279 = new
            else:
                res.p31 = new
    if plan.want_names:
        res.names = _names_of_block(buf, n_q, n_kind, n_lang, n_start, n_end, n_esc, n_line, extra["names"], res)
    if plan.id_props is not None:
        res.ids = _ids_of_block(buf, i_q, i_prop, i_start, i_end, extra["ids"])
    res.errors.sort()
    return res


_EMPTY = (np.empty(0, np.int64), np.empty(0, np.int64))
_NO_PROPS = np.empty(0, np.int64)


def _check_last_line(buf: np.ndarray, lines: int, res: _BlockResult) -> None:
    """The file's last line had no end of line: it must be a whole statement, a comment or blank
    (a dump cut in the middle of a line ends inside a statement)."""
    body = bytes(buf[:-1])
    last = body[body.rfind(b"\n") + 1:]
    text = last.strip(b" \t\r")
    if text and not text.startswith(b"#") and not TRIPLE_RE.match(last):
        res.errors.append((lines - 1, f"the last line is cut (the file ends inside a statement, without an end of "
                                      f"line): {last[:200]!r}"))


def _odd_lines(buf, plan: Plan, o_line, o_start, o_end, o_pred, res: _BlockResult) -> dict[str, list]:
    """The odd lines' verdicts (:func:`.ntriples.classify`); the first bad one is the block's error."""
    extra: dict[str, list] = {"P279": [], "P31": [], "names": [], "ids": []}
    for k in range(len(o_line)):
        try:
            verdict = classify(bytes(buf[o_start[k]:o_end[k]]), int(o_pred[k]), plan.is_seed, plan.langs)
        except LineError as e:
            res.errors.append((int(o_line[k]), str(e)))
            break  # the first bad line of the block is the one reported
        kind = verdict[0]
        if kind in ("P279", "P31"):
            extra[kind].append(verdict[1:])
        elif kind == "non_item":
            res.non_items.append((int(o_line[k]), *verdict[1:]))
        elif kind == "name":
            extra["names"].append(verdict[1:])
        elif kind == "id":
            extra["ids"].append(verdict[1:])
        elif kind == "deferred":
            (res.deferred_ids if o_pred[k] >= PRED_ID else res.deferred).append((verdict[1], int(o_line[k]), verdict[2]))
    return extra


def _names_of_block(buf, n_q, n_kind, n_lang, n_start, n_end, n_esc, n_line, extra: list,
                    res: _BlockResult) -> pl.DataFrame:
    from taxoforge.sources.wikidata.dump_text import gather_spans

    offsets, data, bad_escape = gather_spans(buf, n_start, n_end, n_esc)  # escapes decoded
    raw = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(n_q), [None, pa.py_buffer(offsets),
                                                                          pa.py_buffer(data)])
    bad = np.zeros(len(n_q), dtype=bool)

    def kind(k) -> str:
        return "rdfs:label" if n_kind[k] == 0 else "skos:altLabel"

    try:
        text = raw.cast(pa.large_string())
    except pa.ArrowInvalid:  # invalid UTF-8 somewhere in the block: find it (rare)
        values = []
        for k in range(len(n_q)):
            try:
                bytes(buf[n_start[k]:n_end[k]]).decode("utf-8")  # the text as written is checked
                values.append(bytes(data[offsets[k]:offsets[k + 1]]).decode("utf-8"))
            except UnicodeDecodeError as e:
                values.append(None)
                bad[k] = True
                res.deferred.append((int(n_q[k]), int(n_line[k]), f"the {kind(k)} is not UTF-8 text ({e})"))
        text = pa.array(values, type=pa.large_string())
    names = pl.from_arrow(text)
    flagged = np.flatnonzero(bad_escape & ~bad)
    if len(flagged):  # an unknown escape, or one that is no character: Python words the message
        fixed = []
        for k in flagged:
            written = bytes(buf[n_start[k]:n_end[k]]).decode("utf-8")
            try:
                fixed.append(unescape(written))
            except ValueError as e:
                fixed.append(None)
                bad[k] = True
                res.deferred.append((int(n_q[k]), int(n_line[k]), f"{e}, in the {kind(k)} \"{written[:200]}\""))
        names = names.scatter(flagged, fixed)
    df = pl.DataFrame({"q": n_q, "kind": n_kind, "lang": n_lang, "name": names})
    if bad.any():
        df = df.filter(pl.Series(~bad))
    if extra:
        df = pl.concat([df, pl.DataFrame(extra, schema=df.schema, orient="row")])
    return df


def _ids_of_block(buf, i_q, i_prop, i_start, i_end, extra: list) -> pl.DataFrame:
    """The identifier values of a block: gathered like the names; a value that is not UTF-8 is
    kept with replacement characters, so the property's format check drops and counts it."""
    from taxoforge.sources.wikidata.dump_text import gather_spans

    offsets, data, _ = gather_spans(buf, i_start, i_end, np.zeros(len(i_q), dtype=np.bool_))
    raw = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(i_q), [None, pa.py_buffer(offsets),
                                                                          pa.py_buffer(data)])
    try:
        text = raw.cast(pa.large_string())
    except pa.ArrowInvalid:
        text = pa.array([v.decode("utf-8", "replace") for v in raw.to_pylist()], type=pa.large_string())
    df = pl.DataFrame({"q": i_q, "prop": i_prop, "value": pl.from_arrow(text)})
    if extra:
        df = pl.concat([df, pl.DataFrame(extra, schema=ID_SCHEMA, orient="row")])
    return df


class NameStore:
    """Names read so far: in memory up to ``spill_bytes``, then in temporary IPC files.

    Parameters
    ----------
    spill_bytes : int
        Bytes of names held in memory before they are written to a temporary file.
    schema : dict, optional
        The columns (default :data:`NAME_SCHEMA`; a ``q`` column of QID numbers always).
    """

    def __init__(self, spill_bytes: int, schema: dict | None = None) -> None:
        self.spill_bytes = spill_bytes
        self.schema = schema or NAME_SCHEMA
        self.frames: list[pl.DataFrame] = []
        self.size = 0
        self.rows = 0
        self.dir: str | None = None
        self.files: list[str] = []

    def add(self, df: pl.DataFrame | None) -> None:
        """Keep the names of one block.

        Parameters
        ----------
        df : polars.DataFrame or None
            ``q``, ``kind``, ``lang``, ``name``.
        """
        if df is None or df.height == 0:
            return
        self.frames.append(df)
        self.rows += df.height
        self.size += df.estimated_size()
        if self.size > self.spill_bytes:
            self._spill()

    def _spill(self) -> None:
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="taxoforge-dump-names-")
        path = os.path.join(self.dir, f"{len(self.files):05d}.arrow")
        pl.concat(self.frames).write_ipc(path, compression="lz4")
        self.files.append(path)
        self.frames, self.size = [], 0

    def each(self):
        """The rows read so far, a frame at a time, without taking them out of the store.

        Yields
        ------
        polars.DataFrame
            A block's rows, or a spilled file's.
        """
        for path in self.files:
            yield pl.read_ipc(path)
        yield from list(self.frames)

    def select(self, positions: Callable[[np.ndarray], np.ndarray]) -> pl.DataFrame:
        """The names wanted, once (the store empties as it goes).

        Parameters
        ----------
        positions : callable
            ``positions(q)`` is -1 for the QID numbers whose names are not wanted.

        Returns
        -------
        polars.DataFrame
            ``q``, ``kind``, ``lang``, ``name`` of the others, in one chunk.
        """
        parts = []

        def kept(df: pl.DataFrame) -> pl.DataFrame:
            mask = positions(df["q"].to_numpy()) >= 0
            return df if mask.all() else df.filter(pl.Series(mask))

        while self.frames:  # frees each block's names as it goes
            parts.append(kept(self.frames.pop(0)))
        for path in self.files:
            parts.append(kept(pl.read_ipc(path)))
        return pl.concat(parts, rechunk=True) if parts else pl.DataFrame(schema=self.schema)

    def close(self) -> None:
        """Remove the temporary files."""
        self.frames = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


@dataclass
class Scan:
    """Everything one pass keeps.

    Parameters
    ----------
    p279, p31 : list
        Per block, the ``(child, parent)`` arrays of QID numbers.
    names : NameStore, optional
        The names.
    ids : NameStore, optional
        The identifier values (:data:`ID_SCHEMA`).
    deferred : list
        ``(QID number, line, message)`` of bad names: errors if their node is kept.
    deferred_ids : list
        The same of bad identifier lines: errors if their item is kept.
    non_items : list
        ``(line, subject, object, reason)`` of edges to or from non-items.
    counts : dict
        Lines, odd lines, non-item edges.
    """

    p279: list = field(default_factory=list)
    p31: list = field(default_factory=list)
    names: NameStore | None = None
    ids: NameStore | None = None
    deferred: list[tuple[int, int, str]] = field(default_factory=list)  # (QID number, line, message)
    deferred_ids: list[tuple[int, int, str]] = field(default_factory=list)
    non_items: list[tuple[int, str, str, str]] = field(default_factory=list)  # (line, subject, object, reason)
    counts: dict = field(default_factory=lambda: {"non_item_edges": 0})

    def arrays(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """All edges of one relation.

        Parameters
        ----------
        key : {"p279", "p31"}
            The relation.

        Returns
        -------
        child, parent : numpy.ndarray
            ``int64`` QID numbers.
        """
        parts = getattr(self, key)
        if not parts:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return (np.concatenate([c for c, _ in parts]).astype(np.int64, copy=False),
                np.concatenate([p for _, p in parts]).astype(np.int64, copy=False))


def scan_nt(plan: Plan, workers: int, spill_bytes: int) -> Scan:
    """One pass over the N-Triples file of ``plan`` (module docstring).

    Parameters
    ----------
    plan : Plan
        What to keep.
    workers : int
        Threads scanning blocks (and decompressing).
    spill_bytes : int
        Names held in memory before the rest go to temporary files.

    Returns
    -------
    Scan
        Edges, names, non-item edges, counts (``lines``, ``odd_lines``, ``non_item_edges``).

    Raises
    ------
    ValueError
        ``file:line: message`` for the first bad line; ``file: …`` for a corrupt file.
    """
    scan = Scan(names=NameStore(spill_bytes) if plan.want_names else None,
                ids=NameStore(spill_bytes, ID_SCHEMA) if plan.id_props is not None else None)
    counts = scan.counts
    counts.update(lines=0, odd_lines=0)
    line0 = 0
    offset = 0

    def collect(res: _BlockResult) -> None:
        nonlocal line0, offset
        if res.errors:
            idx, msg = res.errors[0]
            raise ValueError(f"{plan.path}:{line0 + idx + 1}: {msg}")
        scan.p279.append(res.p279)
        if len(res.p31[0]):
            scan.p31.append(res.p31)
        if scan.names is not None:
            scan.names.add(res.names)
        if scan.ids is not None:
            scan.ids.add(res.ids)
        scan.deferred += [(q, line0 + idx + 1, msg) for q, idx, msg in res.deferred]
        scan.deferred_ids += [(q, line0 + idx + 1, msg) for q, idx, msg in res.deferred_ids]
        scan.non_items += [(line0 + idx + 1, s, o, why) for idx, s, o, why in res.non_items]
        counts["non_item_edges"] += len(res.non_items)
        counts["odd_lines"] += res.odd_lines
        line0 += res.lines
        offset += res.nbytes
        blocks.release(offset)

    pending: deque = deque()
    try:
        with Blocks(plan.path, workers) as blocks:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="taxoforge-dump")
            try:
                for block in blocks:
                    pending.append(pool.submit(_scan_block, block, plan))
                    del block
                    while len(pending) > workers:
                        collect(pending.popleft().result())
                while pending:
                    collect(pending.popleft().result())
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
                pending.clear()
    except BaseException:
        for store in (scan.names, scan.ids):
            if store is not None:
                store.close()
        raise
    counts["lines"] = line0
    return scan

