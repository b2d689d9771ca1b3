"""Offline extraction from a local Wikidata dump file (N-Triples or Turtle, plain, gzip or bz2).

Input
    A file of ``wdt:P279`` / ``wdt:P31`` / label triples: Wikidata's whole "truthy" N-Triples
    dump (``latest-truthy.nt.gz`` / ``.bz2``) or any filter of it such as
    ``zgrep -E 'prop/direct/P(31|279)>|rdf-schema#label|core#altLabel' latest-truthy.nt.gz``.
    Optionally seed QIDs, and the languages of the names.

Output
    A :class:`~taxoforge.sources.wikidata.graph.WikidataGraph`, as the SPARQL route gives:

    * without seeds, the whole subclass-of graph (every P279 edge between items);
    * with seeds, their P31 edges and the P279 closure of their classes (as
      :func:`~taxoforge.sources.wikidata.extract.extract_from_seeds` fetches it);
    * labels and aliases, in the chosen languages, of every node of the graph and every seed.

Algorithm: one pass over the file, in parallel; memory bounded by what is kept
    1. The file is read once, in blocks of whole lines (:data:`_CHUNK` bytes): a plain file
       memory-mapped (its pages released as blocks are done), a compressed one decoded in
       parallel where that pays (``rapidgzip`` for gzip on more than four cores, one ISA-L
       thread beside the scanners below that; ``indexed_bzip2`` for bzip2 on every core).
       Each block is scanned by
       compiled code (:func:`.dump_scan.scan_block`, no Python per line) in a pool of one
       thread per core. It keeps P279 edges, P31 edges of the seeds, and labels and aliases
       of items in the wanted languages; the rare *odd* lines (non-item objects, unusual
       whitespace, malformed lines) are classified one by one in Python.
    2. Kept: edges as pairs of ``int64`` QID numbers (16 bytes an edge, ~80 MB for Wikidata's
       4.9 M P279 edges); names as Arrow strings, in memory up to ``spill_bytes`` and beyond
       that in a temporary compressed file (which names are wanted is only known once every
       edge has been read: the whole truthy dump has about 100 M English labels and aliases,
       the taxonomy needs a few million).
    3. The graph: edges out of the root (Q35120) are dropped, as the SPARQL route never
       expands it; with seeds, the closure is a breadth-first search over the compressed
       sparse graph (``scipy.sparse.csgraph``) from the seeds' classes; the names are
       restricted to the nodes left and the seeds. The tables are built sorted on integer
       keys, in :class:`WikidataGraph`'s normal form (:func:`_assemble`).

    Turtle files are streamed through pyoxigraph's parser (one pass, one core).

Errors
    A bad line among those used raises ``ValueError`` naming the file and the line number
    (counted by the scanner on the way, so the hot path pays nothing for them): a P279 line
    that is not a triple, whose object is a literal or a corrupted IRI (a NUL byte, say), or
    whose QID has more than 18 digits (QIDs are kept as 64-bit integers; Wikidata's are below
    10⁹); the same for the P31 lines of seeds; a label or alias of a node of the graph that is
    malformed, is not UTF-8 or holds an escape that is not a Unicode character (``\\U00110000``)
    — those are checked for every item and reported only when the node is kept. Lines with
    other predicates, and names of nodes that are not kept, are not checked. A truncated or
    corrupt compressed file raises ``ValueError`` naming the file.
"""

from __future__ import annotations

import bz2
import gzip
import mmap
import os
import shutil
import tempfile
import time
from array import array
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from taxoforge.arrays import sorted_unique
from taxoforge.sources.wikidata.extract import ROOT_QID
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.ids import qid_number, validate_qid, validate_qids
from taxoforge.sources.wikidata.ntriples import LANG_RE, MAX_QID_DIGITS, PRED_P279, LineError, classify, unescape

__all__ = ["read_dump", "open_dump", "dump_format", "dump_languages", "graph_from_tables", "MAX_QID_DIGITS"]

#: Bytes read per block (whole lines; a block grows to hold a longer line).
_CHUNK = 1 << 25
#: Names held in memory before they are spilled to a temporary file.
_SPILL_BYTES = 512 << 20


_IRI = {
    "P31": "http://www.wikidata.org/prop/direct/P31",
    "P279": "http://www.wikidata.org/prop/direct/P279",
    "label": "http://www.w3.org/2000/01/rdf-schema#label",
    "alias": "http://www.w3.org/2004/02/skos/core#altLabel",
}
_ENTITY_IRI = "http://www.wikidata.org/entity/Q"
_KINDS = ("label", "alias")


# ---------------------------------------------------------------- files
def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _compression(path: Path) -> str:
    with path.open("rb") as f:
        magic = f.read(3)
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    if magic == b"BZh":
        return "bzip2"
    return "none"


def open_dump(path: str | os.PathLike, threads: int | None = None):
    """Open ``path`` for binary reading, decompressing gzip or bz2 (recognised by magic bytes)
    with ``rapidgzip`` (parallel decoding on ``threads`` cores when there are more than four,
    one fast ISA-L thread otherwise) / ``indexed_bzip2`` (on ``threads`` cores), or with the
    standard library where those are not installed. Use it as a context manager."""
    path = Path(path)
    kind = _compression(path)
    threads = threads or _cpus()
    if kind == "gzip":
        # rapidgzip's parallel decoding pays on many cores; on a few, one decoding thread beside the
        # scanning threads is faster (measured on 2 cores: 2.1 s of CPU for 1.2 GB with one, 5.6 s with two)
        try:
            import rapidgzip
        except ImportError:  # pragma: no cover - a core dependency
            return gzip.open(path, "rb")
        return rapidgzip.open(str(path), parallelization=threads if threads > 4 else 1)
    if kind == "bzip2":
        try:
            import indexed_bzip2
        except ImportError:  # pragma: no cover - a core dependency
            return bz2.open(path, "rb")
        return indexed_bzip2.open(str(path), parallelization=threads)
    return path.open("rb", buffering=0)


def dump_format(path: str | os.PathLike) -> str:
    """``"nt"`` or ``"ttl"`` from the file name (``.nt``, ``.ttl``, optionally ``.gz``/``.bz2``)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    while suffixes and suffixes[-1] in (".gz", ".bz2", ".gzip"):
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext in (".nt", ".ntriples"):
        return "nt"
    if ext in (".ttl", ".turtle"):
        return "ttl"
    raise ValueError(f"{path}: cannot tell the format from the name; give format='nt' or 'ttl'")


def dump_languages(lang: str | Sequence[str]) -> tuple[str, ...]:
    """Language tags to keep, lower case, from ``"en"``, ``"en,de"`` or ``["en", "de-AT"]``."""
    tags = lang.split(",") if isinstance(lang, str) else list(lang)
    out: list[str] = []
    for t in tags:
        t = str(t).strip()
        if not LANG_RE.match(t):
            raise ValueError(f"lang: {t!r} is not a language tag (letters, then '-' and letters or digits, "
                             "like 'en' or 'en-gb')")
        if t.lower() not in out:
            out.append(t.lower())
    if not out:
        raise ValueError("lang: give at least one language tag")
    return tuple(out)


def _last_newline(buf: np.ndarray, lo: int, hi: int) -> int:
    """Index just after the last newline in ``buf[lo:hi]`` (``lo`` if there is none)."""
    start = max(lo, hi - (1 << 16))
    while True:
        found = np.flatnonzero(buf[start:hi] == 10)
        if len(found):
            return start + int(found[-1]) + 1
        if start == lo:
            return lo
        hi, start = start, max(lo, start - (1 << 20))


class _Blocks:
    """Blocks of whole lines of the (decompressed) file as read-only ``uint8`` arrays, each
    ending in a newline (one is added after a last line without). A plain file is mapped
    into memory (the blocks are views of the mapping: no copy); a compressed one is
    decompressed on ``threads`` cores into fresh buffers. Used as a context manager that
    outlives the blocks' users (the mapping is closed on exit)."""

    def __init__(self, path: Path, threads: int) -> None:
        self.path, self.threads = path, threads
        self.kind = _compression(path)
        self._file = self._map = None
        self._released = 0

    def __enter__(self) -> "_Blocks":
        if self.kind == "none" and self.path.stat().st_size:
            self._file = self.path.open("rb")
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            if hasattr(self._map, "madvise"):
                self._map.madvise(mmap.MADV_SEQUENTIAL)
        return self

    def release(self, upto: int) -> None:
        """The blocks before byte ``upto`` are done with: their pages leave this process's memory
        (they stay in the page cache), so resident memory follows the blocks in flight, not the file."""
        if self._map is None or not hasattr(self._map, "madvise"):
            return
        page = mmap.PAGESIZE
        a, b = self._released // page * page, min(upto, len(self._map)) // page * page
        if b > a:
            self._map.madvise(mmap.MADV_DONTNEED, a, b - a)
            self._released = b

    def __exit__(self, *exc) -> None:
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a block is still referenced somewhere: unmapped when it goes
                pass
            self._file.close()
            self._map = self._file = None

    def __iter__(self) -> Iterator[np.ndarray]:
        if self.kind == "none":
            if self._map is not None:
                yield from self._mapped()
            return
        total = 0
        try:
            with open_dump(self.path, self.threads) as f:
                rest = np.empty(0, dtype=np.uint8)
                first = True
                while True:
                    buf = np.empty(len(rest) + _CHUNK, dtype=np.uint8)
                    buf[: len(rest)] = rest
                    got = _read_full(f, memoryview(buf)[len(rest):])
                    total += got
                    n = len(rest) + got
                    if first and n >= 3 and bytes(buf[:3]) == b"\xef\xbb\xbf":  # a byte-order mark
                        buf[:3] = 32
                    first = False
                    if got == 0:
                        _check_complete(f, self.path, self.kind)
                        if n:
                            yield _readonly(np.concatenate([buf[:n], [10]]).astype(np.uint8))
                        return
                    cut = _last_newline(buf, 0, n)
                    rest = buf[cut:n].copy()
                    if cut:
                        yield _readonly(buf[:cut])
        except (OSError, RuntimeError, EOFError, ValueError) as e:
            raise ValueError(f"{self.path}: cannot decompress the {self.kind} data after {total:,} bytes of output: "
                             f"the file is truncated or corrupt ({type(e).__name__}: {str(e)[:300]})") from e

    def _mapped(self) -> Iterator[np.ndarray]:
        data = np.frombuffer(self._map, dtype=np.uint8)
        size = len(data)
        start = 0
        while start < size:
            end = min(start + _CHUNK, size)
            if end < size:
                cut = _last_newline(data, start, end)
                if cut == start:  # a line longer than the block
                    nl = np.flatnonzero(data[end:] == 10)
                    cut = end + int(nl[0]) + 1 if len(nl) else size
                end = cut
            block = data[start:end]
            if start == 0 and bytes(block[:3]) == b"\xef\xbb\xbf":  # a byte-order mark: whitespace
                block = block.copy()
                block[:3] = 32
            if block[-1] != 10:
                block = np.concatenate([block, np.array([10], dtype=np.uint8)])
            yield _readonly(block)
            start = end
        del data


def _check_complete(f, path: Path, kind: str) -> None:
    """At the end of the output: a parallel decompressor may stop quietly where a truncated
    file ends. gzip: its position in the input must be the file's end. bzip2: the file must end
    with the stream-end marker (48 bits, then the 32-bit CRC and up to 7 bits of padding)."""
    if kind == "gzip" and hasattr(f, "tell_compressed"):
        size_bits = path.stat().st_size * 8
        if f.tell_compressed() != size_bits:
            raise EOFError(f"the gzip stream stops at bit {f.tell_compressed():,} of {size_bits:,}")
    elif kind == "bzip2":
        with path.open("rb") as raw:
            raw.seek(max(0, path.stat().st_size - 16))
            tail = int.from_bytes(raw.read(), "big")
        if not any((tail >> (32 + pad)) & 0xFFFFFFFFFFFF == 0x177245385090 for pad in range(8)):
            raise EOFError("the bzip2 stream has no end-of-stream marker")


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # one compiled signature for mapped and decompressed blocks
    return a


def _read_full(f, view: memoryview) -> int:
    got = 0
    while got < len(view):
        n = f.readinto(view[got:])
        if not n:
            break
        got += n
    return got


# ---------------------------------------------------------------- one block
@dataclass
class _Block:
    """What one block of lines yields (line indexes count from the block's first line)."""

    lines: int
    nbytes: int
    p279: tuple[np.ndarray, np.ndarray]
    p31: tuple[np.ndarray, np.ndarray]
    names: pl.DataFrame | None
    non_item_edges: int = 0
    odd_lines: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)
    deferred: list[tuple[int, int, str]] = field(default_factory=list)  # (QID number, line index, message)


@dataclass(frozen=True)
class _Plan:
    path: Path
    want_p31: bool
    seeds: np.ndarray
    want_names: bool
    langs: tuple[str, ...]
    lang_table: np.ndarray
    lang_lens: np.ndarray


def _is_seed(seeds: np.ndarray, q: int) -> bool:
    k = int(np.searchsorted(seeds, q))
    return k < len(seeds) and int(seeds[k]) == q


# ---------------------------------------------------------------- one block
def _scan_block(buf: np.ndarray, plan: _Plan) -> _Block:
    from taxoforge.sources.wikidata.dump_scan import scan_block

    (lines, e_pred, e_child, e_parent, n_q, n_kind, n_lang, n_start, n_end, n_esc, n_line,
     o_line, o_start, o_end, o_pred) = scan_block(buf, plan.want_p31, plan.seeds, plan.want_names,
                                                  plan.lang_table, plan.lang_lens)
    is_279 = e_pred == PRED_P279
    res = _Block(lines=int(lines), nbytes=len(buf), p279=(e_child[is_279], e_parent[is_279]),
                 p31=(e_child[~is_279], e_parent[~is_279]), names=None, odd_lines=len(o_line))
    extra = {"P279": [], "P31": [], "names": []}

    def is_seed(q: int) -> bool:
        return _is_seed(plan.seeds, q)

    for k in range(len(o_line)):
        try:
            verdict = classify(bytes(buf[o_start[k]:o_end[k]]), int(o_pred[k]), is_seed, plan.langs)
        except LineError as e:
            res.errors.append((int(o_line[k]), str(e)))
            break  # the first bad line of the block is the one reported
        kind = verdict[0]
        if kind in ("P279", "P31"):
            extra[kind].append(verdict[1:])
        elif kind == "non_item":
            res.non_item_edges += 1
        elif kind == "name":
            extra["names"].append(verdict[1:])
        elif kind == "deferred":
            res.deferred.append((verdict[1], int(o_line[k]), verdict[2]))
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
    return res


def _names_of_block(buf, n_q, n_kind, n_lang, n_start, n_end, n_esc, n_line, extra: list, res: _Block) -> pl.DataFrame:
    from taxoforge.sources.wikidata.dump_scan import gather_spans

    offsets, data = gather_spans(buf, n_start, n_end)
    raw = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(n_q), [None, pa.py_buffer(offsets),
                                                                          pa.py_buffer(data)])
    bad = np.zeros(len(n_q), dtype=bool)
    try:
        text = raw.cast(pa.large_string())
    except pa.ArrowInvalid:  # invalid UTF-8 somewhere in the block: find it (rare)
        values = []
        for k in range(len(n_q)):
            try:
                values.append(bytes(data[offsets[k]:offsets[k + 1]]).decode("utf-8"))
            except UnicodeDecodeError as e:
                values.append(None)
                bad[k] = True
                kind = "rdfs:label" if n_kind[k] == 0 else "skos:altLabel"
                res.deferred.append((int(n_q[k]), int(n_line[k]), f"the {kind} is not UTF-8 text ({e})"))
        text = pa.array(values, type=pa.large_string())
    names = pl.from_arrow(text)
    escaped = np.flatnonzero(n_esc & ~bad)
    if len(escaped):  # N-Triples escapes are rare in Wikidata: decoded one by one
        fixed = []
        for k in escaped:
            try:
                fixed.append(unescape(names[int(k)]))
            except ValueError as e:
                fixed.append(None)
                bad[k] = True
                kind = "rdfs:label" if n_kind[k] == 0 else "skos:altLabel"
                res.deferred.append((int(n_q[k]), int(n_line[k]), f"{e}, in the {kind} \"{names[int(k)][:200]}\""))
        names = names.scatter(escaped, fixed)
    df = pl.DataFrame({"q": n_q, "kind": n_kind, "lang": n_lang, "name": names})
    if bad.any():
        df = df.filter(pl.Series(~bad))
    if extra:
        df = pl.concat([df, pl.DataFrame(extra, schema=df.schema, orient="row")])
    return df


# ---------------------------------------------------------------- the whole file
class _NameStore:
    """Names read so far: in memory up to ``spill_bytes``, then in temporary IPC files."""

    def __init__(self, spill_bytes: int) -> None:
        self.spill_bytes = spill_bytes
        self.frames: list[pl.DataFrame] = []
        self.size = 0
        self.rows = 0
        self.dir: str | None = None
        self.files: list[str] = []

    def add(self, df: pl.DataFrame) -> None:
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

    def select(self, index: "_Index") -> pl.DataFrame:
        """Names of the QID numbers in ``index`` (once: the store is emptied)."""
        schema = {"q": pl.Int64, "kind": pl.Int8, "lang": pl.Int8, "name": pl.String}
        parts = []
        while self.frames:  # frees each block's names as it goes
            df = self.frames.pop(0)
            parts.append(df.filter(pl.Series(index.positions(df["q"].to_numpy()) >= 0)))
        for path in self.files:
            df = pl.read_ipc(path)
            parts.append(df.filter(pl.Series(index.positions(df["q"].to_numpy()) >= 0)))
        return pl.concat(parts, rechunk=True) if parts else pl.DataFrame(schema=schema)

    def close(self) -> None:
        self.frames = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


@dataclass
class _Scan:
    """Everything one pass keeps: edges as QID numbers, names, counts."""

    p279: list = field(default_factory=list)
    p31: list = field(default_factory=list)
    names: _NameStore | None = None
    deferred: list[tuple[int, int, str]] = field(default_factory=list)  # (QID number, line, message)
    counts: dict = field(default_factory=lambda: {"non_item_edges": 0})

    def arrays(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        parts = getattr(self, key)
        if not parts:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return (np.concatenate([c for c, _ in parts]).astype(np.int64, copy=False),
                np.concatenate([p for _, p in parts]).astype(np.int64, copy=False))


def _scan_nt(plan: _Plan, workers: int, spill_bytes: int) -> _Scan:
    scan = _Scan(names=_NameStore(spill_bytes) if plan.want_names else None)
    counts = scan.counts
    counts.update(lines=0, odd_lines=0)
    line0 = 0
    offset = 0

    def collect(res: _Block) -> None:
        nonlocal line0, offset
        if res.errors:
            idx, msg = res.errors[0]
            raise ValueError(f"{plan.path}:{line0 + idx + 1}: {msg}")
        scan.p279.append(res.p279)
        if len(res.p31[0]):
            scan.p31.append(res.p31)
        if scan.names is not None:
            scan.names.add(res.names)
        scan.deferred += [(q, line0 + idx + 1, msg) for q, idx, msg in res.deferred]
        counts["non_item_edges"] += res.non_item_edges
        counts["odd_lines"] += res.odd_lines
        line0 += res.lines
        offset += res.nbytes
        blocks.release(offset)

    pending: deque = deque()
    try:
        with _Blocks(plan.path, workers) as blocks:
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
        if scan.names is not None:
            scan.names.close()
        raise
    counts["lines"] = line0
    return scan


# ---------------------------------------------------------------- Turtle, streamed by pyoxigraph
def _ttl_triples(path: Path) -> Iterator[tuple[str, str, object]]:
    try:
        import pyoxigraph as ox
    except ImportError:  # pragma: no cover - pyoxigraph ships with the dev extra
        ox = None
    if ox is not None:
        with open_dump(path) as f:
            try:
                for q in ox.parse(input=f, format=ox.RdfFormat.TURTLE):
                    yield q.subject.value, q.predicate.value, q.object
            except SyntaxError as e:
                raise ValueError(f"{path}: Turtle syntax error: {e}") from e
        return
    # fallback: rdflib builds the whole graph in memory — fine for small files only
    import rdflib  # pragma: no cover

    g = rdflib.Graph()  # pragma: no cover
    with open_dump(path) as f:  # pragma: no cover
        g.parse(f, format="turtle")
    for s, p, o in g:  # pragma: no cover
        yield str(s), str(p), o


def _qnum(iri: str, where: str) -> int | None:
    if iri.startswith(_ENTITY_IRI):
        rest = iri[len(_ENTITY_IRI):]
        if rest.isdigit() and rest[0] != "0" and rest.isascii():
            if len(rest) > MAX_QID_DIGITS:
                raise ValueError(f"{where}: the QID Q{rest[:40]}… has more than {MAX_QID_DIGITS} digits; QIDs are "
                                 "read as 64-bit integers")
            return int(rest)
    return None


def _scan_ttl(plan: _Plan) -> _Scan:
    scan = _Scan()
    p279, p31 = (array("q"), array("q")), (array("q"), array("q"))
    names: list[tuple[int, int, int, str]] = []
    kinds = {_IRI["label"]: 0, _IRI["alias"]: 1}
    where = str(plan.path)
    for s, p, o in _ttl_triples(plan.path):
        if p == _IRI["P279"] or (plan.want_p31 and p == _IRI["P31"]):
            c = _qnum(s, where)
            if p == _IRI["P31"] and (c is None or not _is_seed(plan.seeds, c)):
                continue
            par = _qnum(getattr(o, "value", str(o)), where)
            if c is None or par is None:
                scan.counts["non_item_edges"] += 1
                continue
            pair = p279 if p == _IRI["P279"] else p31
            pair[0].append(c)
            pair[1].append(par)
        elif plan.want_names and p in kinds:
            tag = (getattr(o, "language", None) or "").lower()
            if tag in plan.langs:
                q = _qnum(s, where)
                if q is not None:
                    names.append((q, kinds[p], plan.langs.index(tag), str(getattr(o, "value", o))))
    scan.p279.append(tuple(np.frombuffer(a, dtype=np.int64).copy() for a in p279))
    scan.p31.append(tuple(np.frombuffer(a, dtype=np.int64).copy() for a in p31))
    if plan.want_names:
        scan.names = _NameStore(_SPILL_BYTES)
        scan.names.add(pl.DataFrame(names, schema={"q": pl.Int64, "kind": pl.Int8, "lang": pl.Int8, "name": pl.String},
                                    orient="row"))
    return scan


# ---------------------------------------------------------------- from the kept edges to the graph
# Sorting and set operations on QID numbers go through np.sort (numpy's vectorised sort):
# np.unique, np.isin and np.setdiff1d on int64 arrays are 20-60x slower in numpy 2.4
# (taxoforge.arrays.sorted_unique).
_POW10 = 10 ** np.arange(19, dtype=np.int64)


class _Index:
    """Positions of QID numbers in a sorted array of distinct ones: a dense table when the
    numbers are dense enough (one int32 per number up to the largest), else binary search."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids
        top = int(ids[-1]) + 1 if len(ids) else 0
        self.table = None
        if top and top <= max(1 << 26, 16 * len(ids)):
            self.table = np.full(top, -1, dtype=np.int32 if len(ids) < 2**31 else np.int64)
            self.table[ids] = np.arange(len(ids), dtype=self.table.dtype)

    def positions(self, q: np.ndarray) -> np.ndarray:
        """Index of each number in ``ids``, or -1 where it is not there."""
        if not len(self.ids):
            return np.full(len(q), -1, dtype=np.int64)
        if self.table is not None:
            if not len(q) or (int(q.min()) >= 0 and int(q.max()) < len(self.table)):
                return self.table[q].astype(np.int64, copy=False)
            inside = (q >= 0) & (q < len(self.table))
            out = np.full(len(q), -1, dtype=np.int64)
            out[inside] = self.table[q[inside]]
            return out
        pos = np.searchsorted(self.ids, q)
        pos[pos == len(self.ids)] = 0
        return np.where(self.ids[pos] == q, pos, -1)


def _closure(child: np.ndarray, parent: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """QID numbers reachable upward from ``starts`` over child→parent edges (starts included)."""
    ids = sorted_unique(np.concatenate([child, parent, starts]))
    index = _Index(ids)
    n = len(ids)
    c, p, s = index.positions(child), index.positions(parent), index.positions(starts)
    # one virtual source (index n) pointing at every start
    rows = np.concatenate([c, np.full(len(s), n)])
    cols = np.concatenate([p, s])
    g = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
    order = breadth_first_order(g, n, directed=True, return_predecessors=False)
    order = order[order < n]
    return ids[np.sort(order)]


def _select_edges(c279: np.ndarray, p279: np.ndarray, c31: np.ndarray, p31: np.ndarray,
                  seed_nums: np.ndarray | None, root_num: int, counts: dict):
    """The graph's P279 and P31 edges: the root's out-edges dropped; with seeds, the closure."""
    not_root = c279 != root_num
    c279, p279 = c279[not_root], p279[not_root]
    if seed_nums is not None:
        with_class = _Index(sorted_unique(c31))
        classless = seed_nums[with_class.positions(seed_nums) < 0]
        starts = sorted_unique(np.concatenate([p31, classless]))
        reach = _closure(c279, p279, starts) if len(starts) else np.empty(0, np.int64)
        keep = _Index(reach).positions(c279) >= 0
        c279, p279 = c279[keep], p279[keep]
        counts["seeds_without_class"] = int(len(classless))
    return c279, p279, c31, p31


def _lex_keys(q: np.ndarray) -> np.ndarray | None:
    """Integer keys that sort QID numbers as their ids ``wd:Q<n>`` sort as strings (``Q10`` before
    ``Q2``): the digits left-aligned, then the length; ``None`` past 17 digits."""
    if not len(q):
        return q.copy()
    if int(q.max()) >= 10**17:
        return None
    digits = np.searchsorted(_POW10[:18], q, side="right")
    return q * _POW10[17 - digits] * 18 + digits


def _node_ids(q: np.ndarray) -> pl.Series:
    return pl.select((pl.lit("wd:Q") + pl.Series(q, dtype=pl.Int64).cast(pl.String)).alias("id")).to_series()


_EDGE_COLS = {"child": pl.String, "parent": pl.String, "relation": pl.String}
_NAME_COLS = {"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String}


def _assemble(edges: dict[str, np.ndarray], seed_nums: np.ndarray | None, names_of, langs: tuple[str, ...],
              seed_node_ids: list[str], info: dict) -> WikidataGraph:
    """The graph from its edges (QID numbers ``c279, p279, c31, p31``, taken out of ``edges`` as
    they are used, so their memory goes early) and ``names_of(index)``, the names of the nodes
    in ``index`` (``q``, ``kind`` 0 label / 1 alias, ``lang`` index in ``langs``, ``name``), or
    ``None`` for no names.

    The tables are built sorted and without repeats, in the form :class:`WikidataGraph`
    normalises to: sorting millions of ``wd:Q…`` strings costs seconds, sorting integers a
    fraction of one. Each node's rank in string order comes from an integer key
    (:func:`_lex_keys`); an edge is then one int64 (child rank, parent rank, relation), sorted."""
    parts = [edges["c31"], edges["p31"], edges["c279"], edges["p279"]]
    nodes = sorted_unique(np.concatenate(parts + ([seed_nums] if seed_nums is not None else [])))
    del parts
    index = _Index(nodes)
    lex = _lex_keys(nodes)
    if lex is None:  # a QID of 18 digits: WikidataGraph sorts the strings
        c31, p31, c279, p279 = (edges.pop(k) for k in ("c31", "p31", "c279", "p279"))
        edge_df = pl.DataFrame({"child": _node_ids(np.concatenate([c31, c279])),
                                "parent": _node_ids(np.concatenate([p31, p279])),
                                "relation": ["P31"] * len(c31) + ["P279"] * len(c279)}, schema=_EDGE_COLS)
        names = names_of(index) if names_of is not None else None
        names_df = pl.DataFrame(schema=_NAME_COLS) if names is None else names.select(
            _node_ids(names["q"].to_numpy()).alias("node_id"), "name",
            pl.col("kind").replace_strict([0, 1], list(_KINDS), return_dtype=pl.String),
            pl.col("lang").replace_strict(list(range(len(langs))), list(langs), return_dtype=pl.String))
        return WikidataGraph(edges=edge_df, names=names_df, seed_node_ids=seed_node_ids, info=info)
    order = np.argsort(lex, kind="stable")
    del lex
    rank = np.empty(len(nodes), dtype=np.int64)
    rank[order] = np.arange(len(nodes), dtype=np.int64)
    ids = _node_ids(nodes[order])  # node ids in string order
    del order
    n = max(1, len(nodes))

    def ranks(key: str) -> np.ndarray:
        return rank[index.positions(edges.pop(key))]

    def edge_table() -> pl.DataFrame:
        key = sorted_unique(np.concatenate([  # "P279" sorts before "P31"
            (ranks("c279") * n + ranks("p279")) * 2,
            (ranks("c31") * n + ranks("p31")) * 2 + 1,
        ]))
        return pl.DataFrame({"child": ids.gather(key // (2 * n)), "parent": ids.gather((key // 2) % n),
                             "relation": pl.Series(["P279", "P31"]).gather(key % 2)})

    def name_table() -> pl.DataFrame:
        names = names_of(index) if names_of is not None else None
        if names is None:
            return pl.DataFrame(schema=_NAME_COLS)
        by_string = sorted(langs)
        # sort by (node rank, kind, name, lang): the integer part by one np.sort of packed keys, names only
        # within the groups of equal (rank, kind) — several aliases or languages of one node
        k0 = rank[index.positions(names["q"].to_numpy())] * 2 + (1 - names["kind"].to_numpy())  # alias < label
        lang_pos = np.array([by_string.index(t) for t in langs], dtype=np.int8)[names["lang"].to_numpy()]
        t = pl.DataFrame({"k0": k0, "name": names["name"], "l": lang_pos})
        del names, k0, lang_pos
        t = t[_sort_names(t)]
        t = t.filter(pl.any_horizontal([pl.col(c).ne_missing(pl.col(c).shift(1)) for c in t.columns]))  # repeats
        return pl.DataFrame({
            "node_id": ids.gather(t["k0"] // 2),
            "name": t["name"],
            "kind": pl.Series(["alias", "label"]).gather(t["k0"] % 2),
            "lang": pl.Series(by_string).gather(t["l"]),
        })

    # the two tables are independent: built side by side (numpy and polars release the GIL)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="taxoforge-names") as pool:
        names_future = pool.submit(name_table)
        edge_df = edge_table()
        names_df = names_future.result()
    return WikidataGraph.from_normalised(edges=edge_df, names=names_df, seed_node_ids=seed_node_ids, info=info)


def _sort_names(t: pl.DataFrame) -> np.ndarray:
    """Row order of ``t`` (``k0`` int64 ≥ 0, ``name``, ``l``) sorted by ``k0, name, l``."""
    rows = t.height
    if rows == 0:
        return np.empty(0, dtype=np.int64)
    k0 = t["k0"].to_numpy()
    bits = int(rows).bit_length()
    if int(k0.max()).bit_length() + bits > 62:
        return t.with_row_index("i").sort("k0", "name", "l")["i"].to_numpy().astype(np.int64)
    packed = np.sort((k0 << bits) | np.arange(rows, dtype=np.int64))
    order = packed & ((1 << bits) - 1)
    k_sorted = packed >> bits
    del packed
    tie = np.zeros(rows, dtype=bool)
    same = k_sorted[1:] == k_sorted[:-1]
    tie[1:] |= same
    tie[:-1] |= same
    at = np.flatnonzero(tie)
    if len(at):  # runs of equal k0 are contiguous: sort each by (name, lang), put back in place
        sub = t[order[at]].with_columns(pl.Series("i", order[at])).sort("k0", "name", "l")
        order[at] = sub["i"].to_numpy()
    return order


def _seed_numbers(seed_qids: Iterable[str] | None) -> tuple[list[str] | None, np.ndarray | None]:
    if seed_qids is None:
        return None, None
    seed_qids = validate_qids(seed_qids, where="seed_qids")
    for i, q in enumerate(seed_qids):
        if len(q) - 1 > MAX_QID_DIGITS:
            raise ValueError(f"seed_qids: {q[:40]}… has more than {MAX_QID_DIGITS} digits; QIDs are read as 64-bit "
                             "integers (Wikidata's have at most 9 digits)")
    return seed_qids, np.array([qid_number(q) for q in seed_qids], dtype=np.int64)


def read_dump(
    path: str | os.PathLike,
    *,
    seed_qids: Iterable[str] | None = None,
    lang: str | Sequence[str] = "en",
    names: bool = True,
    root: str = ROOT_QID,
    format: str | None = None,
    workers: int | None = None,
    spill_bytes: int = _SPILL_BYTES,
) -> WikidataGraph:
    """Read a dump file into a :class:`WikidataGraph` in one pass (module docstring).

    Parameters
    ----------
    path : path
        N-Triples or Turtle, plain, ``.gz`` or ``.bz2``.
    seed_qids : iterable of str, optional
        Seed entities (QIDs); without them the whole subclass-of graph is read.
    lang : str or sequence of str
        Language(s) of labels and aliases: ``"en"``, ``"en,de"`` or ``["en", "de"]``.
    names : bool
        Read labels and aliases.
    root : str
        The root class, whose own superclasses are not followed.
    format : {"nt", "ttl"}, optional
        Guessed from the file name when not given.
    workers : int, optional
        Threads scanning blocks and decompressing (default: every core this process may use).
    spill_bytes : int
        Names held in memory before the rest go to a temporary file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"dump file not found: {path}")
    fmt = format or dump_format(path)
    if fmt not in ("nt", "ttl"):
        raise ValueError(f"format must be 'nt' or 'ttl', got {fmt!r}")
    langs = dump_languages(lang)
    root_num = qid_number(validate_qid(root, where="root"))
    seed_qids, seed_nums = _seed_numbers(seed_qids)
    workers = max(1, int(workers or _cpus()))
    from taxoforge.sources.wikidata.dump_scan import encode_langs

    lang_table, lang_lens = encode_langs(langs if names else ())
    plan = _Plan(path=path, want_p31=seed_nums is not None,
                 seeds=np.sort(seed_nums) if seed_nums is not None else np.empty(0, np.int64),
                 want_names=names, langs=langs, lang_table=lang_table, lang_lens=lang_lens)
    t0 = time.perf_counter()
    scan = _scan_nt(plan, workers, spill_bytes) if fmt == "nt" else _scan_ttl(plan)
    st = path.stat()
    info = {
        "method": "dump",
        "file": str(path.resolve()),
        "file_bytes": st.st_size,
        "file_mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime)),
        "format": fmt,
        "compression": _compression(path),
        "root": f"wd:Q{root_num}",
        "lang": ",".join(langs),
        "seeds": len(seed_qids) if seed_qids is not None else None,
        "workers": workers if fmt == "nt" else 1,
    }
    try:
        c279, p279 = scan.arrays("p279")
        c31, p31 = scan.arrays("p31")
        scan.p279, scan.p31 = [], []  # the blocks' arrays, now copied into one
        counts = scan.counts
        counts["p279_edges_read"] = int(len(c279))
        counts["p31_edges_read"] = int(len(c31))
        t_scan = time.perf_counter() - t0
        t1 = time.perf_counter()
        c279, p279, c31, p31 = _select_edges(c279, p279, c31, p31, seed_nums, root_num, counts)
        edges = {"c279": c279, "p279": p279, "c31": c31, "p31": p31}
        del c279, p279, c31, p31

        def names_of(index: _Index) -> pl.DataFrame:
            if scan.deferred:  # bad names: an error if their node is in the graph
                q = np.array([d[0] for d in scan.deferred], dtype=np.int64)
                kept = [d for d, pos in zip(scan.deferred, index.positions(q)) if pos >= 0]
                if kept:
                    _, line, msg = min(kept, key=lambda d: d[1])
                    raise ValueError(f"{path}:{line}: {msg}")
            counts["names_read"] = scan.names.rows
            counts["names_spilled_files"] = len(scan.names.files)
            return scan.names.select(index)

        graph = _assemble(edges, seed_nums, names_of if names else None, langs,
                          [f"wd:{q}" for q in seed_qids] if seed_qids is not None else [], info)
    finally:
        if scan.names is not None:
            scan.names.close()
    graph.info.update(counts, edges=graph.edges.height, names=graph.names.height, seconds_scan=round(t_scan, 3),
                      seconds_graph=round(time.perf_counter() - t1, 3))
    return graph


def _qid_number(column: str) -> pl.Expr:
    return pl.col(column).str.strip_prefix("wd:Q").cast(pl.Int64)


def graph_from_tables(edges: pl.DataFrame, names: pl.DataFrame, *, seed_qids: Iterable[str] | None = None,
                      root: str = ROOT_QID, info: dict | None = None) -> WikidataGraph:
    """The graph :func:`read_dump` gives, from the tables of the same filter run elsewhere (the
    Spark job of :mod:`.dump_spark`): ``edges`` (``child``, ``parent``, ``relation``: every P279
    edge between items and the P31 edges of the seeds) and ``names`` (``node_id``, ``name``,
    ``kind``, ``lang``: labels and aliases in the wanted languages of at least the graph's
    nodes and the seeds). Drops the root's out-edges, takes the seeds' closure and restricts
    the names exactly as :func:`read_dump` does."""
    root_num = qid_number(validate_qid(root, where="root"))
    seed_qids, seed_nums = _seed_numbers(seed_qids)
    e = edges.select(_qid_number("child").alias("c"), _qid_number("parent").alias("p"), "relation")
    e279 = e.filter(pl.col("relation") == "P279")
    e31 = e.filter(pl.col("relation") == "P31")
    if seed_nums is not None:
        e31 = e31.filter(pl.col("c").is_in(pl.Series(seed_nums)))
    else:
        e31 = e31.clear()
    counts = {"p279_edges_read": e279.height, "p31_edges_read": e31.height}
    c279, p279, c31, p31 = _select_edges(e279["c"].to_numpy(), e279["p"].to_numpy(), e31["c"].to_numpy(),
                                         e31["p"].to_numpy(), seed_nums, root_num, counts)
    langs = tuple(sorted(names["lang"].unique().to_list())) or ("en",)

    def names_of(index: _Index) -> pl.DataFrame:
        t = names.select(_qid_number("node_id").alias("q"),
                         pl.col("kind").replace_strict(list(_KINDS), [0, 1], return_dtype=pl.Int8),
                         pl.col("lang").replace_strict(list(langs), list(range(len(langs))), return_dtype=pl.Int8),
                         "name")
        return t.filter(pl.Series(index.positions(t["q"].to_numpy()) >= 0))

    graph = _assemble({"c279": c279, "p279": p279, "c31": c31, "p31": p31}, seed_nums, names_of, langs,
                      [f"wd:{q}" for q in seed_qids] if seed_qids is not None else [], dict(info or {}))
    graph.info.update(counts, root=f"wd:Q{root_num}", seeds=len(seed_qids) if seed_qids is not None else None,
                      edges=graph.edges.height, names=graph.names.height)
    return graph
