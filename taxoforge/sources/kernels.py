"""Every compiled kernel of the library, compiled once into numba's on-disk cache, at install.

numba compiles a kernel the first time it is called with new argument types and keeps the
machine code in its on-disk cache (``cache=True``, :func:`taxoforge.trees.graph_kernels.compiled`):
``__pycache__`` beside the module, numba's user-wide cache where that folder is read-only, or
``$NUMBA_CACHE_DIR``. Every later process loads it in milliseconds, where compiling takes tens
of seconds (the Wikidata dump scanner alone about fifteen): without this step the first
``read_dump`` or ``build_tree`` after an install pays that. :func:`compile_kernels` calls every
kernel with exactly the argument types the library's own calls give it, by running the
library's entry points on tiny inputs:

* ``"trees"``: :func:`~taxoforge.trees.build.build_tree` on small graphs — ids of the integer
  route (prefixed numbers: ``wd:Q…``, ``inat:…``) and of the string route, cycles under both
  policies, ties, several roots — on one thread and with every step split over threads
  (:func:`taxoforge.trees.threads.every_step_split`: the kernels that only several threads
  call, which a tiny input would not reach): what the trees of the embedded default call.
* ``"dump"``: :func:`~taxoforge.sources.wikidata.dump.read_dump` of a small N-Triples file
  (P279 edges, the seeds' P31 edges, labels and aliases in two languages, an escape, a blank
  node, identifier claims) plain, gzip and bzip2, with and without seeds, names and identifiers,
  one with an 18-digit QID, its Turtle form, and
  :func:`~taxoforge.sources.wikidata.dump_tables.graph_from_tables` (the Spark job's route);
  then ``build_tree`` as above on 17-digit numbers (the sorts' fallback where key and index do
  not fit 62 bits, which ids that long, such as some of a dump's, take).

The two groups compile different kernels (apart from the few sorts both call), so
``python -m taxoforge.sources.kernels`` runs them in two processes at once and prints one line
saying what it does and how long it took (``… kernels trees``: that group alone, in this
process). ``make test`` and ``make dev`` run it once, right after installing; ``make demo`` runs
it beside the demo, the tree builder's first and the dump reader's at the lowest priority, and
the demo's processes call :func:`compile_kernels` for the tree builder's group before they build
a tree. Each group is compiled under a file lock of its own (in the cache folder,
:func:`taxoforge.files.paths.default_cache_dir`), so processes that start at once compile a
kernel once: the first compiles, the others wait for it and then load its machine code. A
kernel whose module changes afterwards is compiled again on its first call (numba keys its cache
on the module file's time stamp and size).
"""

from __future__ import annotations

import bz2
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from taxoforge.files.locks import held_lock
from taxoforge.files.paths import default_cache_dir
from taxoforge.sources.wikidata.dump import read_dump
from taxoforge.sources.wikidata.dump_tables import graph_from_tables
from taxoforge.trees.build import build_tree
from taxoforge.trees.threads import every_step_split

__all__ = ["GROUPS", "compile_kernels", "main"]

GROUPS = ("trees", "dump")
#: the most seconds a process waits for another one compiling the same group
LOCK_TIMEOUT_S = 1800.0
#: the groups this process has compiled or loaded (each only once per process)
_READY: set[str] = set()

_WD = "http://www.wikidata.org/entity/Q"
_DIRECT = "http://www.wikidata.org/prop/direct/"
_LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
_ALIAS = "<http://www.w3.org/2004/02/skos/core#altLabel>"


def _trees(names=(lambda v: f"wd:Q{v}", lambda v: f"n{v:04d}")) -> None:
    """``build_tree`` on small graphs whose ids ``names`` makes of numbers (module docstring)."""
    import polars as pl

    def graph(name) -> pl.DataFrame:
        pairs = [(2, 1), (3, 1), (4, 2), (4, 3), (5, 4), (6, 5), (5, 6), (7, 8), (9, 9), (10, 4), (10, 3)]
        return pl.DataFrame({"child": [name(c) for c, _ in pairs], "parent": [name(p) for _, p in pairs]})

    for split in (False, True):
        for name in names:
            for policy in ("dfs_back_edges", "drop_abstract"):
                if split:
                    with every_step_split(cores=4):  # four: the sorts split on three threads or more
                        build_tree(graph(name), source="k", cycle_policy=policy, exclude=[name(8)])
                else:
                    build_tree(graph(name), source="k", cycle_policy=policy, exclude=[name(8)], threads=1)


def _dump_lines() -> list[str]:
    def e(q: int) -> str:
        return f"<{_WD}{q}>"

    lines = ["# a tiny truthy dump", ""]
    for q in range(2, 40):
        lines += [f"{e(q)} <{_DIRECT}P279> {e(q // 2)} .", f'{e(q)} {_LABEL} "class {q}"@en .',
                  f'{e(q)} {_ALIAS} "Klasse {q}"@de .']
    lines += [f"{e(5)} <{_DIRECT}P279> {e(7)} .", f"{e(7)} <{_DIRECT}P279> {e(5)} .",  # a cycle
              f"{e(6)} <{_DIRECT}P279> _:b0 .", f"{e(6)} <{_DIRECT}P279> <http://www.wikidata.org/entity/L5> .",
              f"{e(100)} <{_DIRECT}P31> {e(12)} .", f"{e(101)} <{_DIRECT}P31> {e(13)} .",
              f'{e(100)} {_LABEL} "an \\"instance\\" \\u00e9"@en .', f'{e(101)} {_LABEL} "another"@en-gb .',
              f'{e(100)} <{_DIRECT}P3151> "55387" .', f'{e(12)} <{_DIRECT}P846> "2435099" .',
              f'{e(13)}\t<{_DIRECT}P279>  {e(1)}  .  # a comment', f'{e(1)} <http://schema.org/description> "x"@en .',
              f"{e(1)} <{_DIRECT}P279> {e(35120)} .", f"{e(35120)} <{_DIRECT}P279> {e(2)} ."]
    return lines


def _dump() -> None:
    import polars as pl

    text = ("\n".join(_dump_lines()) + "\n").encode()
    big = f"<{_WD}123456789012345678> <{_DIRECT}P279> <{_WD}2> .\n".encode()
    ttl = (f"@prefix wd: <{_WD[:-1]}> .\n@prefix wdt: <{_DIRECT}> .\n"
           "wd:Q2 wdt:P279 wd:Q1 .\nwd:Q2 <http://www.w3.org/2000/01/rdf-schema#label> \"two\"@en .\n").encode()
    with tempfile.TemporaryDirectory(prefix="taxoforge-kernels-") as d:
        folder = Path(d)
        files = {"plain": folder / "wd.nt", "gzip": folder / "wd.nt.gz", "bzip2": folder / "wd.nt.bz2",
                 "big": folder / "big.nt", "ttl": folder / "wd.ttl"}
        files["plain"].write_bytes(text)
        files["gzip"].write_bytes(gzip.compress(text))
        files["bzip2"].write_bytes(bz2.compress(text))
        files["big"].write_bytes(text + big)
        files["ttl"].write_bytes(ttl)
        for split in (False, True):
            def read(path, **kw):
                if split:
                    with every_step_split(cores=4):  # four: the sorts split on three threads or more
                        return read_dump(path, **kw)
                return read_dump(path, workers=1, **kw)

            g = read(files["plain"])
            read(files["gzip"], lang="en,de")
            read(files["bzip2"], seed_qids=["Q100", "Q101", "Q3"], identifiers=True,
                 identifier_seeds=["55387"])
            read(files["plain"], names=False)
            read(files["big"])
            read(files["ttl"])
            graph_from_tables(g.edges, g.names, seed_qids=["Q3"],
                              non_items=pl.DataFrame({"child_id": ["wd:Q6"], "parent_id": ["_:b0"],
                                                      "detail": ["blank node"]}))
    _trees(names=(lambda v: f"x:{10**16 + v}",))


def compile_kernels(groups: tuple[str, ...] = GROUPS) -> dict[str, float]:
    """Compile (or load from numba's cache) every kernel of ``groups`` in this process, each
    group under its file lock and once per process (module docstring).

    Parameters
    ----------
    groups : tuple of str
        Some of :data:`GROUPS`.

    Returns
    -------
    dict
        Seconds per group.

    Raises
    ------
    ValueError
        For a group that is not one of :data:`GROUPS`.
    """
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise ValueError(f"unknown kernel groups {sorted(unknown)}; expected some of {list(GROUPS)}")
    took = {}
    for group in groups:
        t0 = time.perf_counter()
        if group not in _READY:
            folder = default_cache_dir() / "kernels"
            folder.mkdir(parents=True, exist_ok=True)
            with held_lock(folder / f"{group}.lock", f"the {group} kernels being compiled", LOCK_TIMEOUT_S):
                {"trees": _trees, "dump": _dump}[group]()
            _READY.add(group)
        took[group] = round(time.perf_counter() - t0, 2)
    return took


def main(argv: list[str] | None = None) -> int:
    """``python -m taxoforge.sources.kernels [GROUP …]``: every group in its own process, at once
    (one group: in this process).

    Parameters
    ----------
    argv : list of str, optional
        Group names (default all); ``--in-process`` compiles them in this process, without a line.

    Returns
    -------
    int
        The exit code: 0, or the first failing group's.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    here = "--in-process" in args
    groups = tuple(a for a in args if a != "--in-process") or GROUPS
    if here:
        compile_kernels(groups)
        return 0
    print(f"taxoforge: compiling the numba kernels once into their on-disk cache ({', '.join(groups)}; "
          "later calls load them) …", flush=True)
    t0 = time.perf_counter()
    if len(groups) == 1:
        compile_kernels(groups)
        print(f"taxoforge: {groups[0]} kernels compiled in {time.perf_counter() - t0:.1f} s", flush=True)
        return 0
    procs = {g: subprocess.Popen([sys.executable, "-m", "taxoforge.sources.kernels", "--in-process", g])
             for g in groups}
    codes = {g: p.wait() for g, p in procs.items()}
    failed = [g for g, c in codes.items() if c]
    if failed:
        print(f"taxoforge: compiling the {', '.join(failed)} kernels failed", file=sys.stderr, flush=True)
        return codes[failed[0]]
    print(f"taxoforge: kernels compiled in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - the command line
    raise SystemExit(main())
