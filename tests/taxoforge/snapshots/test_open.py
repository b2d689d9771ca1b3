"""The one way to open a taxonomy: what it resolves, and what a score then cites — always a
reference a store can resolve, never a version the tables do not match; a tree folder's
content hash remembered while its files are unchanged, never after."""

from __future__ import annotations

import hashlib
import os
import shutil

import polars as pl
import pytest

from taxoforge.snapshots import (
    AlteredSnapshot,
    SnapshotError,
    SnapshotStore,
    TaxonomyNotFound,
    content_id,
)
import taxoforge.snapshots.open as opening
from taxoforge.files.trusted import trusted_dir
from taxoforge.snapshots.manifest import manifest_bytes, read_manifest
from taxoforge.trees.tables import TreeTables
from tests.taxoforge.snapshots.helpers import resolved, make_tree, random_edges


@pytest.fixture()
def store(tmp_path, tree):
    st = SnapshotStore(tmp_path / "store")
    st.publish(tree)
    return st


def _alter_a_label(folder):
    """Rewrite nodes.parquet with one label changed (a real, readable table)."""
    nodes = pl.read_parquet(folder / "nodes.parquet")
    first = nodes["node_id"][0]
    nodes = nodes.with_columns(pl.when(pl.col("node_id") == first).then(pl.lit("ALTERED")).otherwise(pl.col("label"))
                               .alias("label"))
    nodes.write_parquet(folder / "nodes.parquet")


def test_a_reference_in_the_store_is_cited_with_the_store(store, tree):
    ref = f"demo@{store.latest('demo')}"
    tables, cite = resolved("demo", store=store)
    # a local folder nobody gave a public URL: cited as local-only, never by its path
    assert (cite.ref, cite.store, cite.local_only, cite.published, cite.verified) == (ref, None, True, True, "store")
    assert str(store.root) not in str(cite.as_dict()) and "no public URL" in str(cite)
    assert cite.content_sha256 == content_id(tree)[1]
    assert tables.info["snapshot"] == ref and tables.info["citation"]["ref"] == ref
    assert tables.info["seed"] == 0 and tables.info["source_versions"]["toy"] == "1.0"  # provenance kept
    # the content reference resolves to the same snapshot
    assert resolved(f"sha256:{cite.content_sha256[:20]}", store=store)[1].ref == ref


def test_an_unknown_name_lists_what_the_store_has(tmp_path, store):
    with pytest.raises(TaxonomyNotFound) as e:
        resolved("inaturalist", store=store)
    msg = str(e.value)
    assert e.value.exit_code == 3
    assert f"inaturalist: not a folder, and store {store.url}: no taxonomy 'inaturalist'" in msg
    assert f"demo (latest demo@{store.latest('demo')}, 1 version)" in msg
    assert "taxoforge publish data/assets/<tree> --name inaturalist" in msg
    assert e.value.available == [f"demo@{store.latest('demo')}"]
    with pytest.raises(TaxonomyNotFound, match="has no version 'beef'"):
        resolved("demo@beef", store=store)
    with pytest.raises(TaxonomyNotFound, match="no snapshot store at"):
        resolved("wordnet", store=tmp_path / "no-store")
    with pytest.raises(TaxonomyNotFound, match="no such folder"):
        resolved(str(tmp_path / "missing" / "tree"), store=store)


def test_a_snapshot_folder_in_its_store_is_verified_and_cited(store):
    folder = store.local_dir("demo", store.latest("demo"))
    _, cite = resolved(folder, store=store)
    assert cite.ref == f"demo@{store.latest('demo')}" and cite.verified == "store" and cite.local_only
    assert cite.store is None


def test_a_copied_snapshot_folder_is_checked_by_its_content(tmp_path, store):
    version = store.latest("demo")
    copy = tmp_path / "elsewhere" / "demo-snapshot"
    shutil.copytree(store.local_dir("demo", version), copy)
    _, cite = resolved(copy, store=store)
    assert (cite.ref, cite.verified, cite.store, cite.local_only) == (f"demo@{version}", "content", None, True)
    # no store knows it: cited by its content hash, which a store resolves once it has it
    _, cite = resolved(copy, store=tmp_path / "empty-store")
    assert (cite.ref, cite.published, cite.version) == (f"sha256:{cite.content_sha256}", False, None)
    assert store.resolve(cite.ref)[1]["version"] == version


@pytest.mark.parametrize("where", ["in its store", "copied out"])
def test_an_altered_snapshot_folder_is_never_cited_as_its_version(tmp_path, store, where):
    """Scoring a snapshot folder whose tables were altered cited the
    original version and exited 0."""
    version = store.latest("demo")
    folder = store.local_dir("demo", version)
    if where == "copied out":
        folder = shutil.copytree(folder, tmp_path / "copy")
    _alter_a_label(folder)
    with pytest.raises(AlteredSnapshot, match=f"refusing to cite demo@{version}") as e:
        resolved(folder, store=store)
    assert e.value.exit_code == 4 and any("nodes.parquet" in p for p in e.value.problems)
    tables, cite = resolved(folder, store=store, altered="content")
    assert cite.version is None and not cite.published and cite.ref.startswith("sha256:")
    assert cite.content_sha256 == content_id(tables)[1] != read_manifest(folder)["content_sha256"]
    assert "snapshot" not in tables.info and tables.info["citation"]["ref"] == cite.ref
    assert (tables.nodes["label"] == "ALTERED").sum() == 1


@pytest.mark.parametrize("where", ["in its store", "copied out"])
def test_an_altered_folder_whose_manifest_was_edited_to_match_is_caught(tmp_path, store, where):
    version = store.latest("demo")
    folder = store.local_dir("demo", version)
    if where == "copied out":
        folder = shutil.copytree(folder, tmp_path / "copy")
    _alter_a_label(folder)
    m = read_manifest(folder)
    data = (folder / "nodes.parquet").read_bytes()
    m["files"]["nodes.parquet"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (folder / "manifest.json").write_bytes(manifest_bytes(m))
    with pytest.raises(AlteredSnapshot, match="content hash"):
        resolved(folder, store=store)


def test_an_altered_copy_in_the_store_is_refused_by_name_too(store):
    version = store.latest("demo")
    _alter_a_label(store.local_dir("demo", version))
    with pytest.raises(AlteredSnapshot, match=f"local copy of demo@{version} does not match") as e:
        resolved(f"demo@{version}", store=store)
    assert e.value.exit_code == 4


def test_a_tree_folder_is_cited_by_content_until_it_is_published(tmp_path, tree):
    """A tree folder was cited `inaturalist_tree@<hash>`, which no store resolves."""
    folder = tmp_path / "data" / "assets" / "demo_tree"
    tree.write(folder)
    st = SnapshotStore(tmp_path / "store")
    tables, cite = resolved(folder, store=st)
    assert cite.ref == f"sha256:{content_id(tree)[1]}" and not cite.published and cite.store is None
    assert cite.taxonomy == "demo_tree" and tables.info["seed"] == 0
    r = st.publish(tables, name="demo")
    assert st.resolve(cite.ref)[1]["version"] == r.version  # the old citation now resolves
    _, cite = resolved(folder, store=st)
    assert (cite.ref, cite.store, cite.published, cite.local_only) == (r.ref, None, True, True)


def test_a_store_given_a_public_url_is_cited_by_it_from_then_on(tmp_path, tree):
    """The public URL a publisher names is recorded in the store's index: every later
    citation (by any reader, with no option) names it; a malformed one is refused."""
    root = tmp_path / "store"
    SnapshotStore(root).publish(tree)
    assert resolved("demo", store=root)[1].local_only
    r = SnapshotStore(root, public_url="https://taxa.example.org/snapshots").publish(tree)  # already there: records it
    assert r.status == "unchanged"
    _, cite = resolved("demo", store=root)
    assert (cite.store, cite.local_only) == ("https://taxa.example.org/snapshots", False)
    assert cite.as_dict()["store"] == "https://taxa.example.org/snapshots"
    assert 'data-store-url="https://taxa.example.org/snapshots"' in (root / "index.html").read_text()
    for bad in ("not a url", "https://h/a b", "javascript:alert(1)"):
        with pytest.raises(SnapshotError, match="bad public URL"):
            SnapshotStore(root, public_url=bad).publish(tree)
    assert resolved("demo", store=root)[1].store == "https://taxa.example.org/snapshots"


def test_tables_in_memory_are_cited_by_content(tmp_path, store, tree):
    _, cite = resolved(tree, store=store)
    assert cite.ref == f"demo@{store.latest('demo')}"
    other = make_tree(random_edges(seed=11))
    _, cite = resolved(other, store=store)
    assert cite.ref == f"sha256:{content_id(other)[1]}"


def test_a_bad_altered_policy_is_refused(store):
    with pytest.raises(ValueError, match="altered='ignore'"):
        resolved("demo", store=store, altered="ignore")


# ---------------------------------------------------------------------------- a tree folder's remembered content hash
def _tree(folder, labels=("Life", "Canis", "Canis lupus")):
    nodes = pl.DataFrame({"node_id": ["r", "g", "s"], "parent_id": [None, "r", "g"], "label": list(labels)})
    TreeTables(name="toy", nodes=nodes).write(folder)
    return folder


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAXOFORGE_SNAPSHOT_STORE", str(tmp_path / "no-store"))
    monkeypatch.setattr(opening, "RACY_S", 0.0)  # the files were just written
    return tmp_path / "cache"


def test_an_unchanged_tree_folder_is_cited_by_its_remembered_hash(tmp_path, cache):
    folder = _tree(tmp_path / "tree")
    tables, first = resolved(folder)
    assert first.content_sha256 == content_id(TreeTables.read(folder))[1]
    assert opening.cached_content_sha256(opening.folder_stamp(folder)) == first.content_sha256
    _, again = resolved(folder)
    assert again == first


def test_an_altered_table_is_hashed_again_not_cited_by_the_old_hash(tmp_path, cache):
    folder = _tree(tmp_path / "tree")
    _, first = resolved(folder)
    _tree(folder, labels=("Life", "Canis", "Canis latrans"))  # a new file renamed over the old one
    _, after = resolved(folder)
    assert after.content_sha256 != first.content_sha256
    assert after.content_sha256 == content_id(TreeTables.read(folder))[1]


def test_a_table_rewritten_in_place_with_its_old_times_is_still_caught(tmp_path, cache):
    folder = _tree(tmp_path / "tree")
    _, first = resolved(folder)
    path = folder / "nodes.parquet"
    st = os.stat(path)
    other = tmp_path / "other"
    _tree(other, labels=("Life", "Canis", "Canis lupuz"))
    data = (other / "nodes.parquet").read_bytes()
    assert len(data) == st.st_size  # same size, same inode, mtime put back: only the change time moves
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate(len(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, after = resolved(folder)
    assert after.content_sha256 == content_id(TreeTables.read(folder))[1] != first.content_sha256


def test_racy_files_and_files_changed_after_the_stamp_are_not_remembered(tmp_path, cache, monkeypatch):
    folder = _tree(tmp_path / "tree")
    monkeypatch.setattr(opening, "RACY_S", 3600.0)
    stamp = opening.folder_stamp(folder)
    assert not opening.remember_content_sha256(stamp, "0" * 64)
    monkeypatch.setattr(opening, "RACY_S", 0.0)
    stamp = opening.folder_stamp(folder)
    _tree(folder, labels=("Life", "Canis", "Canis latrans"))  # changed between the stamp and the record
    assert not opening.remember_content_sha256(stamp, "0" * 64)
    assert opening.cached_content_sha256(opening.folder_stamp(folder)) is None


def test_a_damaged_record_is_ignored(tmp_path, cache):
    folder = _tree(tmp_path / "tree")
    _, first = resolved(folder)
    for rec in trusted_dir().glob("content-hash-*.json"):
        rec.write_text("{not json")
    assert opening.cached_content_sha256(opening.folder_stamp(folder)) is None
    _, again = resolved(folder)
    assert again.content_sha256 == first.content_sha256


# ---------------------------------------------------------------------------- what open_taxonomy takes
def test_a_snapshot_url_a_tree_in_memory_and_an_open_tree(tmp_path, tree):
    from taxoforge.snapshots import open_taxonomy
    from taxoforge.trees.taxonomy import Taxonomy
    from tests.taxoforge.snapshots.helpers import serve, stop

    pub = SnapshotStore(tmp_path / "remote").publish(tree, name="demo", check=False)
    srv, t = serve(tmp_path / "remote")
    try:  # <store URL>/NAME[@VERSION]: pulled into the cache, verified, cited with that store
        got = open_taxonomy(f"{srv.url}/demo@{pub.version}", cache=tmp_path / "local")
        assert got.citation.ref == pub.ref and got.citation.store == srv.url and got.citation.verified == "store"
        assert len(got) == tree.nodes.height and got.version == pub.ref and got.stored_path is not None
        with pytest.raises(TaxonomyNotFound, match="names no taxonomy"):
            open_taxonomy(srv.url + "/")
    finally:
        stop(srv, t)
    mem = Taxonomy.of(tree)  # made from tables, never cited: cited by its content hash when opened
    assert mem.citation is None and open_taxonomy(mem, tmp_path / "no-store") is mem
    assert mem.citation.ref == f"sha256:{content_id(tree)[1]}" and mem.stored_path is None
    assert open_taxonomy({"r": None, "a": "r"}).ancestors("a") == ["r", "a"]  # nothing to cite
    with pytest.raises(ValueError, match="altered='ignore'"):
        open_taxonomy(str(tmp_path / "x"), altered="ignore")


def test_one_tree_is_cited_the_same_from_any_working_folder_and_any_store_path(tmp_path, tree, monkeypatch):
    """The default store is the user data folder's, not one relative to the working folder:
    a tree folder published there is cited by its name whether it is scored from the
    checkout or elsewhere, with no --store, with the store's path spelt another way, or with
    another store that lacks it."""
    from taxoforge.snapshots.store import default_store_url

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TAXOFORGE_STORE", raising=False)
    monkeypatch.delenv("TAXOFORGE_SNAPSHOT_STORE", raising=False)
    assert default_store_url() == str(tmp_path / "xdg" / "taxoforge" / "snapshots")
    folder = tmp_path / "checkout" / "data" / "assets" / "demo_tree"
    tree.write(folder)
    published = SnapshotStore().publish(resolved(folder)[0], name="demo")
    other = SnapshotStore(tmp_path / "another-store")
    other.publish(make_tree(random_edges(seed=11)), name="other")
    refs = set()
    for cwd, store in ((tmp_path / "checkout", None), (tmp_path, None), (tmp_path / "checkout", other),
                       (tmp_path, str(tmp_path / "xdg" / "taxoforge" / ".." / "taxoforge" / "snapshots"))):
        monkeypatch.chdir(cwd)
        for given in (folder, "data/assets/demo_tree" if cwd.name == "checkout" else folder):
            refs.add(resolved(given, store=store)[1].ref)
    assert refs == {published.ref}
    monkeypatch.setenv("TAXOFORGE_STORE", str(tmp_path / "another-store"))  # the variable names the default store
    assert default_store_url() == str(tmp_path / "another-store")
    monkeypatch.setenv("TAXOFORGE_SNAPSHOT_STORE", str(tmp_path / "former"))  # the former name: read, second
    assert default_store_url() == str(tmp_path / "another-store")
    monkeypatch.delenv("TAXOFORGE_STORE")
    assert default_store_url() == str(tmp_path / "former")
