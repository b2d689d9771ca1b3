"""The stored mapping index (taxoforge.scores.mapping.store), for real: trees written to
temporary folders, indexes built, written, memory-mapped and read back, damaged on disk,
opened by two processes at once, from a folder another user cannot write, by the CLI twice.

A stored index maps every answer exactly as an index built in memory (a hypothesis
property over generated answers on a tree of real iNaturalist taxa); it is never rebuilt
while valid (file mtimes unchanged) and never used when it is not (altered tree, foreign,
truncated or corrupted files: rebuilt)."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.name_tables import NameTables
from taxoforge.scores.mapping.store import HEADER, code_fingerprint, open_name_tables, read_index
from taxoforge.snapshots.tree_cache import INDEX_FOLDER, index_place, tree_key
from taxoforge.snapshots import SnapshotStore
from taxoforge.snapshots.verify import verify_folder
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy
from tests.taxoforge.scores.conftest import INAT_LIKE, INAT_LIKE_NAMES, tree_tables
from tests.taxoforge.scores.mapping.test_candidates import answers


@pytest.fixture(scope="module")
def real_tree() -> TreeTables:
    """2,000 random iNaturalist species and every taxon above them (real names)."""
    from benchmarks.bench_mapping import inat_sample_tree

    return inat_sample_tree(2_000, seed=0)


def _mapped(a) -> bool:
    """Whether an array lies on a memory-mapped file (a ``np.memmap`` or a view of one)."""
    while a is not None:
        if isinstance(a, np.memmap):
            return True
        a = getattr(a, "base", None)
    return False


def _written(tables: TreeTables, folder: Path) -> Path:
    tables.write(folder)
    return folder


def _files(path: Path) -> dict[str, int]:
    """mtime (ns) of every file of an index folder."""
    return {p.name: p.stat().st_mtime_ns for p in sorted(path.iterdir())}


def _same_mapping(a: TaxonomyIndex, b: TaxonomyIndex, texts: list[str]) -> None:
    x, y = a.map(texts), b.map(texts)
    assert x.node_idx.tolist() == y.node_idx.tolist()
    assert x.stage.tolist() == y.stage.tolist()
    assert np.array_equal(x.score, y.score) and x.tied.tolist() == y.tied.tolist()
    assert np.array_equal(a.names_anything(texts), b.names_anything(texts))


# ---------------------------------------------------------------------------- results
def test_a_stored_index_maps_every_answer_as_one_built_in_memory(real_tree, tmp_path):
    folder = _written(real_tree, tmp_path / "tree")
    tax = Taxonomy.of(TreeTables.read(folder))
    memory = TaxonomyIndex(tax, MappingConfig())
    built = TaxonomyIndex.open(folder)
    loaded = TaxonomyIndex.open(folder)
    assert built.store.built and not loaded.store.built and loaded.store.path == built.store.path
    assert built.store.path.parent == folder / INDEX_FOLDER and built.store.place == "tree folder"
    # loaded, not copied: the arrays are memory-mapped views of the stored files
    assert all(_mapped(a) for a in loaded.tables.arrays().values())
    for name, a in memory.tables.arrays().items():
        assert np.array_equal(a, loaded.tables.arrays()[name]), name
    names = [x for x in tax._labels if x]
    words = sorted({w for x in names for w in x.split()})

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.lists(answers(names, words), min_size=50, max_size=50))
    def prop(batch):
        _same_mapping(memory, loaded, batch)

    prop()


def test_a_second_open_does_not_rebuild(real_tree, tmp_path, monkeypatch):
    folder = _written(real_tree, tmp_path / "tree")
    first = TaxonomyIndex.open(folder)
    before = _files(first.store.path)
    assert HEADER in before and len(before) == len(NameTables.ARRAYS) + 1

    def no_build(*args, **kwargs):
        raise AssertionError("the stored index was rebuilt")

    monkeypatch.setattr(NameTables, "build", staticmethod(no_build))
    again = TaxonomyIndex.open(folder, MappingConfig(k=3))
    assert not again.store.built and again.store.path == first.store.path
    assert _files(first.store.path) == before
    run = again.map(["Toco Toucan", "a bird"])
    assert len(run.node_idx) == 2


def test_an_altered_tree_gets_a_new_index_and_the_old_one_is_removed(tmp_path):
    folder = _written(tree_tables(INAT_LIKE, INAT_LIKE_NAMES), tmp_path / "tree")
    old = TaxonomyIndex.open(folder)
    rows = [(n, p, "Ramphastos vitellinus" if n == "r_toco" else lab) for n, p, lab in INAT_LIKE]
    _written(tree_tables(rows, INAT_LIKE_NAMES), folder)
    new = TaxonomyIndex.open(folder)
    assert new.store.built and new.store.tree_key != old.store.tree_key and new.store.path != old.store.path
    assert not old.store.path.exists()  # beside a tree: the index of its earlier content goes
    got = new.map(["Ramphastos vitellinus"])
    assert new.taxonomy.ids[got.node_idx[0]] == "r_toco" and got.stage[0] == "exact"
    # a name-only change (the names table) is part of the key too
    names = [*INAT_LIKE_NAMES, ("r_toco", "Channel-billed Toucan")]
    _written(tree_tables(rows, names), folder)
    assert TaxonomyIndex.open(folder).store.tree_key != new.store.tree_key


def test_index_relevant_config_gets_its_own_folder_the_rest_shares_one(tmp_path):
    folder = _written(tree_tables(INAT_LIKE, INAT_LIKE_NAMES), tmp_path / "tree")
    default = TaxonomyIndex.open(folder, MappingConfig())
    for cfg in (MappingConfig(base_forms=False), MappingConfig(ngram_sizes=(3, 2)),
                MappingConfig(skip_name_kinds=())):
        other = TaxonomyIndex.open(folder, cfg)
        assert other.store.built and other.store.path != default.store.path, cfg.index_config()
    for cfg in (MappingConfig(k=3, thr_vote=2), MappingConfig(similarity="wratio", temperature=0.05),
                MappingConfig(prefilter=False, contains="substring", max_answer_chars=50)):
        shared = TaxonomyIndex.open(folder, cfg)
        assert not shared.store.built and shared.store.path == default.store.path
        assert shared.config == cfg
    # the four indexes of this one tree stay side by side
    assert len([p for p in (folder / INDEX_FOLDER).iterdir() if p.is_dir()]) == 4


def _damage_truncate(path: Path) -> None:
    p = path / "name_ptr.npy" if (path / "name_ptr.npy").exists() else sorted(path.glob("*.npy"))[0]
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _damage_flip(path: Path) -> None:
    # a byte of array data flipped, the file's size and header unchanged
    p = max(path.glob("*.npy"), key=lambda q: q.stat().st_size)
    data = bytearray(p.read_bytes())
    data[-9] ^= 0xFF
    p.write_bytes(bytes(data))


def _damage_header_json(path: Path) -> None:
    (path / HEADER).write_text('{"format": 1, "tree_key": ')


def _damage_header_foreign(path: Path) -> None:
    h = json.loads((path / HEADER).read_text())
    h["tree_key"] = "0" * 64
    (path / HEADER).write_text(json.dumps(h))


def _damage_header_code(path: Path) -> None:
    h = json.loads((path / HEADER).read_text())
    h["code"] = "an older version of the rules"
    (path / HEADER).write_text(json.dumps(h))


def _damage_shape(path: Path) -> None:
    h = json.loads((path / HEADER).read_text())
    name = next(iter(h["arrays"]))
    h["arrays"][name][1] = [h["arrays"][name][1][0] + 1, *h["arrays"][name][1][1:]]
    (path / HEADER).write_text(json.dumps(h))


def _damage_missing_array(path: Path) -> None:
    sorted(path.glob("*.npy"))[-1].unlink()


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_flip, _damage_header_json, _damage_header_foreign,
                                    _damage_header_code, _damage_shape, _damage_missing_array],
                         ids=lambda f: f.__name__.removeprefix("_damage_"))
def test_a_damaged_or_foreign_index_is_rebuilt_never_used(real_tree, tmp_path, damage):
    folder = _written(real_tree, tmp_path / "tree")
    first = TaxonomyIndex.open(folder)
    damage(first.store.path)
    tax = first.taxonomy
    assert read_index(first.store.path, tree_key(tax), MappingConfig()) is None
    again = TaxonomyIndex.open(folder)
    assert again.store.built and again.store.path == first.store.path
    texts = [x for x in tax._labels if x][:300] + ["a toucan", "two ants on a leaf", "Aloe vra"]
    _same_mapping(TaxonomyIndex(tax, MappingConfig()), again, texts)
    assert not TaxonomyIndex.open(folder).store.built


def test_the_code_fingerprint_covers_the_rules_that_make_the_keys():
    from importlib import resources

    root = resources.files("taxoforge")
    from taxoforge.scores.mapping.store import _KEY_SOURCES

    for name in _KEY_SOURCES:
        assert root.joinpath(name).is_file(), name
    # every module the name tables are built from is covered
    assert {"scores/mapping/keys.py", "scores/mapping/postings.py", "scores/mapping/strings.py",
            "scores/mapping/trigrams.py", "scores/mapping/name_tables.py"} <= set(_KEY_SOURCES)
    assert len(code_fingerprint()) == 64


# ---------------------------------------------------------------------------- processes
def _open_in_child(folder: str, barrier, queue) -> None:
    barrier.wait()
    index = TaxonomyIndex.open(folder)
    queue.put((index.store.built, str(index.store.path), index.map(["Toco Toucan"]).node_idx.tolist()))


def test_two_processes_opening_at_once_build_once(real_tree, tmp_path):
    folder = _written(real_tree, tmp_path / "tree")
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_open_in_child, args=(str(folder), barrier, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    got = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sorted(b for b, _, _ in got) == [False, True]  # one built, the other waited and loaded
    assert got[0][1:] == got[1][1:]
    assert len([p for p in (folder / INDEX_FOLDER).iterdir() if p.is_dir()]) == 1


_CHILD = """
import json, sys
from taxoforge.scores.mapping import TaxonomyIndex
index = TaxonomyIndex.open(sys.argv[1])
print(json.dumps({**index.store.as_dict(), "path": str(index.store.path)}))
"""


def test_a_tree_folder_that_cannot_be_written_keeps_its_index_in_the_cache(tmp_path):
    base = Path(tempfile.mkdtemp(prefix="taxoforge-ro-"))
    try:
        folder = _written(tree_tables(INAT_LIKE, INAT_LIKE_NAMES), base / "tree")
        cache = base / "cache"
        cache.mkdir()
        env = dict(os.environ, TAXOFORGE_CACHE_DIR=str(cache))
        if os.geteuid() == 0:  # root writes anywhere: open it as another user
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.skip("running as root without setpriv: cannot open the tree as a user who cannot write it")
            for p in (base, folder, *folder.iterdir()):
                p.chmod(0o755 if p.is_dir() else 0o644)
            cache.chmod(0o777)
            as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable]
            probe = subprocess.run([*as_nobody, "-c", "import taxoforge.scores.mapping.store"], cwd=base,
                                   capture_output=True, text=True, timeout=120)
            if probe.returncode != 0:  # e.g. a checkout inside a 0700 folder (mktemp -d)
                pytest.skip("user 65534 cannot run this interpreter or import taxoforge from this checkout: "
                            + (probe.stderr.strip().splitlines() or ["?"])[-1])
            cmd = [*as_nobody, "-c", _CHILD, str(folder)]
        else:
            folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
            cmd = [sys.executable, "-c", _CHILD, str(folder)]
        runs = [json.loads(subprocess.run(cmd, env=env, cwd=base, check=True, capture_output=True, text=True,
                                          timeout=300).stdout.splitlines()[-1]) for _ in range(2)]
        assert [r["built"] for r in runs] == [True, False]
        assert all(r["place"] == "cache" and Path(r["path"]).parent == cache / "mapping-index" for r in runs)
        assert not (folder / INDEX_FOLDER).exists()
    finally:
        for p in base.rglob("*"):
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_pickling_a_stored_index_reopens_its_files(real_tree, tmp_path):
    folder = _written(real_tree, tmp_path / "tree")
    index = TaxonomyIndex.open(folder)
    data = pickle.dumps(index)
    stored_bytes = sum(p.stat().st_size for p in index.store.path.glob("*.npy"))
    # the tree and the configuration travel; the tables (the stored files) do not
    assert len(data) - len(pickle.dumps(index.taxonomy)) < min(20_000, stored_bytes / 20)
    back = pickle.loads(data)
    assert back.store is not None and back.store.path == index.store.path and not back.store.built
    assert all(_mapped(a) for a in back.tables.arrays().values())
    _same_mapping(index, back, [x for x in index.taxonomy._labels if x][:200] + ["a bird on a branch"])


# ---------------------------------------------------------------------------- places
def test_in_memory_tables_use_the_cache_and_an_index_dir_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    tables = tree_tables(INAT_LIKE, INAT_LIKE_NAMES)
    a = TaxonomyIndex.open(tables)
    assert a.store.place == "cache" and a.store.path.parent == tmp_path / "cache" / "mapping-index"
    assert not TaxonomyIndex.open(tree_tables(INAT_LIKE, INAT_LIKE_NAMES)).store.built  # same content, same index
    folder = _written(tables, tmp_path / "tree")
    b = TaxonomyIndex.open(folder, index_dir=tmp_path / "mine")
    assert b.store.place == "index dir" and b.store.path.parent == tmp_path / "mine"
    assert not (folder / INDEX_FOLDER).exists()


def test_a_snapshot_folder_is_never_written(tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    store = SnapshotStore(tmp_path / "store")
    published = store.publish(tree_tables(INAT_LIKE, INAT_LIKE_NAMES, name="inat_like"), name="inat_like",
                              check=False)
    snap = store.local_dir("inat_like", published.version)
    listing = sorted(p.name for p in snap.iterdir())
    from taxoforge.snapshots.open import open_taxonomy
    from taxoforge.scores.run import index_for

    index = index_for(open_taxonomy(published.ref, store=store))
    assert index.store.place == "snapshot store" and index.store.path.parent == tmp_path / "store" / INDEX_FOLDER
    assert sorted(p.name for p in snap.iterdir()) == listing and verify_folder(snap).ok
    assert store.verify(published.ref).ok
    # the same snapshot named by its folder finds the same index
    assert not index_for(open_taxonomy(snap)).store.built
    # a snapshot folder outside any store: the cache
    loose = tmp_path / "loose"
    shutil.copytree(snap, loose)
    place = index_place(loose)
    assert place.kind == "cache" and place.root == tmp_path / "cache" / "mapping-index"
    assert [index_for(open_taxonomy(loose)).store.built for _ in range(2)] == [True, False]
    assert sorted(p.name for p in loose.iterdir()) == listing and verify_folder(loose).ok


def test_open_name_tables_reports_where_and_how(tmp_path):
    tax = Taxonomy.of(tree_tables(INAT_LIKE, INAT_LIKE_NAMES))
    tables, info = open_name_tables(tax, MappingConfig(), index_dir=tmp_path, progress=False)
    assert info.built and info.seconds >= 0 and info.as_dict()["loaded"] is False
    assert json.loads((info.path / HEADER).read_text())["index_config"] == MappingConfig().index_config()
    _, again = open_name_tables(tax, MappingConfig(), index_dir=tmp_path, progress=False)
    assert again.as_dict()["loaded"] is True and again.path == info.path
    assert len(tables) == len(NameTables(tax, MappingConfig()))


# ---------------------------------------------------------------------------- CLI
def test_the_cli_builds_the_index_once_and_the_second_call_loads_it(tmp_path):
    from taxoforge.cli import main

    folder = _written(tree_tables(INAT_LIKE, INAT_LIKE_NAMES, name="inat_like"), tmp_path / "tree")
    out = tmp_path / "o.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "1", "model": "m", "output": "A: Aloe vera", "label": "aloe_vera"},
        {"id": "2", "model": "m", "output": "Toucan", "label": "Black-mandibled Toucan"}]))
    seen = []
    for run in ("first", "second"):
        res = CliRunner().invoke(main, ["score", str(out), str(folder), "-o", str(tmp_path / run), "--no-meteor",
                                        "--bootstrap", "0", "--no-plots"])
        assert res.exit_code == 0, res.output
        seen.append((res.stderr, json.loads((tmp_path / run / "run.json").read_text())["mapping_index"]))
    (first_err, first), (second_err, second) = seen
    assert "mapping index built and stored in" in first_err and first["built"] is True
    assert "mapping index loaded from" in second_err and second["built"] is False
    assert second["path"] == first["path"] and Path(first["path"]).parent == folder / INDEX_FOLDER
    res = CliRunner().invoke(main, ["map", str(out), str(folder), "--index-dir", str(tmp_path / "idx"), "--json",
                                    "--min-scored", "0"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)["info"]["mapping_index"]
    assert info["place"] == "index dir" and info["built"] is True and Path(info["path"]).parent == tmp_path / "idx"


def test_name_embeddings_are_computed_once_per_tree_and_model_and_stored_beside_the_index(tmp_path):
    """The embedding measure (all-MiniLM-L6-v2 from PyPI, CPU): the first open embeds every
    name and stores the array beside the index; a later open in a fresh process state reads
    it memory-mapped (no model call for the names, files untouched) and maps alike."""
    from taxoforge.scores.mapping.sentence_models import NAME_EMBEDDINGS
    from tests.conftest import minilm_or_skip

    minilm_or_skip("cpu")
    folder = _written(tree_tables(INAT_LIKE, INAT_LIKE_NAMES, name="inat_like"), tmp_path / "tree")
    config = MappingConfig(similarity="sentence-transformers:minilm")
    first = TaxonomyIndex.open(folder, config, progress=False)
    emb_dir = first.store.path.with_name(f"{first.store.path.name}.emb-{first.similarity.model_id}")
    assert (emb_dir / "embeddings.npy").is_file() and (emb_dir / HEADER).is_file()
    stored = np.load(emb_dir / "embeddings.npy")
    assert stored.shape == (len(first.tables), first.similarity.dimensions) and stored.dtype == np.float32
    before = _files(emb_dir)

    NAME_EMBEDDINGS.clear()  # as in a new process: nothing embedded in memory
    calls = []
    second = TaxonomyIndex.open(folder, config, progress=False)
    real_embed = second.similarity.embed_names
    second.similarity.embed_names = lambda names, progress=None: calls.append(len(names)) or real_embed(names, progress)
    assert _files(emb_dir) == before
    assert isinstance(second.similarity.embeddings, np.memmap) or isinstance(second.similarity.embeddings.base, np.memmap)
    assert np.array_equal(np.asarray(second.similarity.embeddings), stored)
    texts = ["a tabby cat", "maybe an aloe plant", "Aloe vera", "this is a rose", "I am not sure"]
    _same_mapping(first, second, texts)
    assert all(n <= len(texts) for n in calls)  # only answers were embedded, never the names again


def test_an_index_built_ahead_from_the_tables_is_the_index_built_from_the_tree(real_tree, tmp_path, monkeypatch):
    """On a tree folder's first use the mapping index is built from the moment its tables are
    read (open_taxonomy's ``when_read``), while they are hashed and the tree is stored: the
    stored index is byte for byte the one built from the tree after, and it is built once."""
    from taxoforge.scores.mapping.store import TablesBuiltAhead
    from taxoforge.snapshots.open import open_taxonomy

    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAXOFORGE_TRUST_DIR", str(tmp_path / "trust"))
    after, ahead_folder = _written(real_tree, tmp_path / "after"), _written(real_tree, tmp_path / "ahead")
    plain = TaxonomyIndex.open(open_taxonomy(after), MappingConfig())
    builds = []
    real_build = NameTables.build
    monkeypatch.setattr(NameTables, "build", staticmethod(lambda *a, **k: builds.append(1) or real_build(*a, **k)))
    ahead = TablesBuiltAhead(MappingConfig())
    tree = open_taxonomy(ahead_folder, when_read=ahead)
    assert builds == [1]  # started before the tree was opened
    early = TaxonomyIndex.open(tree, MappingConfig(), ahead=ahead)
    assert builds == [1] and early.store.built  # taken, not built again
    files = lambda p: {f.name: f.read_bytes() for f in sorted(p.iterdir()) if f.name != HEADER}  # noqa: E731
    assert files(early.store.path) == files(plain.store.path)
    labels = real_tree.nodes["label"].drop_nulls().to_list()
    _same_mapping(plain, early, labels[:40] + [f"a photo of {x.lower()}s" for x in labels[40:80]])
    # a second call reads the stored tree and index: nothing is started
    again = TablesBuiltAhead(MappingConfig())
    TaxonomyIndex.open(open_taxonomy(ahead_folder, when_read=again), MappingConfig(), ahead=again)
    assert builds == [1] and again.tables_for(tree, MappingConfig()) is None


def test_tables_built_ahead_are_taken_only_for_the_same_names_and_configuration(real_tree, tmp_path):
    """What was built ahead is given for a tree with the same ids, labels and names under the
    same index configuration, once; for another tree or configuration, nothing."""
    from taxoforge.scores.mapping.store import TablesBuiltAhead, TreeOfTables

    tree = Taxonomy.of(real_tree)
    assert TreeOfTables(real_tree).same_names_as(tree)
    renamed = real_tree.nodes.with_columns(label=real_tree.nodes["label"].str.to_uppercase())
    other = Taxonomy.of(TreeTables(name=real_tree.name, nodes=renamed, names=real_tree.names))
    assert not TreeOfTables(real_tree).same_names_as(other)
    for taxonomy, config, given in [(tree, MappingConfig(), True), (other, MappingConfig(), False),
                                    (tree, MappingConfig(base_forms=False), False)]:
        ahead = TablesBuiltAhead(MappingConfig(), index_dir=tmp_path / "indexes")  # no index stored there
        ahead(real_tree)
        got = ahead.tables_for(taxonomy, config)
        assert (got is not None) == given
        if given:
            arrays, meta = got
            want, want_meta = NameTables.build(tree, MappingConfig())
            assert meta == want_meta and all(np.array_equal(arrays[k], want[k]) for k in want)
            assert ahead.tables_for(taxonomy, config) is None  # given once


def test_a_build_ahead_cancelled_stops_at_its_next_stage(real_tree, tmp_path):
    """A call that fails before it needs the index (a tree that cannot be opened) cancels the
    build ahead, which stops at its next stage instead of keeping the process alive."""
    from taxoforge.scores.mapping.store import TablesBuiltAhead, _BuildCancelled

    ahead = TablesBuiltAhead(MappingConfig(), index_dir=tmp_path / "indexes")
    ahead.cancel()
    ahead(real_tree)
    with pytest.raises(_BuildCancelled):
        ahead._building.result(timeout=60)


def test_nothing_is_built_ahead_where_an_index_of_the_configuration_is_stored(real_tree, tmp_path):
    """Where the tree's place holds an index of the configuration, it will be read, not built:
    nothing is started, and nothing is given."""
    from taxoforge.scores.mapping.store import TablesBuiltAhead

    TaxonomyIndex.open(real_tree, MappingConfig(), index_dir=tmp_path / "indexes")
    ahead = TablesBuiltAhead(MappingConfig(), index_dir=tmp_path / "indexes")
    ahead(real_tree)
    assert ahead._building is None and ahead.tables_for(Taxonomy.of(real_tree), MappingConfig()) is None
