"""After ``compile_kernels`` (what ``make`` runs at install, and beside the demo), no call of the library compiles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from taxoforge.sources import kernels

# A process calling the library the way users do, on inputs larger than the warm-up's, at the
# machine's thread count and with every step split over four threads; it prints every kernel
# that numba had to compile instead of loading it from its cache.
WORKLOAD = textwrap.dedent('''
    import gzip, json, sys
    import numpy as np, polars as pl
    from numba.core.registry import CPUDispatcher
    from taxoforge.sources.wikidata.dump import read_dump
    from taxoforge.sources.wikidata.tree import build_wikidata_tree
    from taxoforge.trees.build import build_tree
    from taxoforge.trees.threads import every_step_split

    folder = sys.argv[1]
    rng = np.random.default_rng(0)
    n = 20_000
    child = np.concatenate([np.arange(1, n), rng.integers(1, n, n)])
    parent = (child * rng.random(len(child))).astype(np.int64)
    child = np.concatenate([child, parent[:50]]); parent = np.concatenate([parent, child[:50]])  # cycles
    for name in (lambda v: f"wd:Q{v}", lambda v: f"n{v:06d}"):
        e = pl.DataFrame({"child": [name(int(v)) for v in child], "parent": [name(int(v)) for v in parent]})
        build_tree(e, source="t")
        build_tree(e, source="t", cycle_policy="drop_abstract", threads=1)
        with every_step_split(cores=4, grain=64):
            build_tree(e, source="t")
    wd, direct = "http://www.wikidata.org/entity/Q", "http://www.wikidata.org/prop/direct/"
    lines = []
    for q in range(2, 30_000):
        lines.append(f"<{wd}{q}> <{direct}P279> <{wd}{rng.integers(1, q)}> .")
        lines.append(f'<{wd}{q}> <http://www.w3.org/2000/01/rdf-schema#label> "class {q}"@en .')
        if q % 7 == 0:
            lines.append(f'<{wd}{q}> <{direct}P3151> "{q}" .')
    lines.append(f"<{wd}100000> <{direct}P31> <{wd}5> .")
    text = ("\\n".join(lines) + "\\n").encode()
    open(f"{folder}/d.nt", "wb").write(text)
    open(f"{folder}/d.nt.gz", "wb").write(gzip.compress(text, 1))
    g = read_dump(f"{folder}/d.nt")
    read_dump(f"{folder}/d.nt.gz", workers=1, seed_qids=["Q100000"], identifiers=True)
    with every_step_split(cores=4, grain=64):
        read_dump(f"{folder}/d.nt", workers=3)
    build_wikidata_tree(g)
    misses = {}
    for mod_name, mod in list(sys.modules.items()):
        if mod_name.startswith("taxoforge"):
            for attr, obj in list(vars(mod).items()):
                if isinstance(obj, CPUDispatcher) and obj.stats.cache_misses:
                    misses[f"{mod_name}.{attr}"] = [str(s) for s in obj.stats.cache_misses]
    print(json.dumps(misses))
''')


@pytest.mark.timeout(900)
def test_no_call_compiles_after_the_kernels_are_compiled(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    subprocess.run([sys.executable, "-m", "taxoforge.sources.kernels"], check=True, env=env, timeout=850)
    done = subprocess.run([sys.executable, "-c", WORKLOAD, str(tmp_path)], check=True, env=env, timeout=850,
                          capture_output=True, text=True)
    misses = json.loads(done.stdout.strip().splitlines()[-1])
    assert misses == {}, f"compiled on a user's call, not by compile_kernels: {misses}"


def test_unknown_groups_are_refused():
    with pytest.raises(ValueError, match="unknown kernel groups"):
        kernels.compile_kernels(("trees", "gpu"))


#: a process that takes a lock file without waiting: exit code 0 when it got it
TAKE_LOCK = "import filelock, sys; filelock.FileLock(sys.argv[1]).acquire(timeout=0)"


def test_a_group_compiles_under_its_lock_once_per_process(tmp_path, monkeypatch):
    """Processes started at once (the demo's parts, ``make demo``'s compile beside them) compile a
    group once: while one compiles it, another process cannot take its lock (it waits, then loads)."""
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernels, "_READY", set())
    lock = tmp_path / "kernels" / "trees.lock"
    held = []

    def warm_up():
        other = subprocess.run([sys.executable, "-c", TAKE_LOCK, str(lock)], capture_output=True, text=True,
                               timeout=60)
        held.append(other.returncode != 0 and "Timeout" in other.stderr)

    monkeypatch.setattr(kernels, "_trees", warm_up)
    kernels.compile_kernels(("trees",))
    kernels.compile_kernels(("trees",))
    assert held == [True]  # run once, the lock held meanwhile
    free = subprocess.run([sys.executable, "-c", TAKE_LOCK, str(lock)], timeout=60)
    assert free.returncode == 0  # released after
