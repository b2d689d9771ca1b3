"""What a score cites: always a reference a store can
resolve, never a version the tables do not match."""

from __future__ import annotations

import hashlib
import shutil

import polars as pl
import pytest

from taxoforge.snapshots import (
    AlteredSnapshot,
    SnapshotError,
    SnapshotStore,
    TaxonomyNotFound,
    content_id,
    resolve_taxonomy,
)
from taxoforge.snapshots.manifest import manifest_bytes, read_manifest
from tests.taxoforge.snapshots.helpers import make_tree, random_edges


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
    tables, cite = resolve_taxonomy("demo", store=store)
    # a local folder nobody gave a public URL: cited as local-only, never by its path
    assert (cite.ref, cite.store, cite.local_only, cite.published, cite.verified) == (ref, None, True, True, "store")
    assert str(store.root) not in str(cite.as_dict()) and "no public URL" in str(cite)
    assert cite.content_sha256 == content_id(tree)[1]
    assert tables.info["snapshot"] == ref and tables.info["citation"]["ref"] == ref
    assert tables.info["seed"] == 0 and tables.info["source_versions"]["toy"] == "1.0"  # provenance kept
    # the content reference resolves to the same snapshot
    assert resolve_taxonomy(f"sha256:{cite.content_sha256[:20]}", store=store)[1].ref == ref


def test_an_unknown_name_lists_what_the_store_has(tmp_path, store):
    with pytest.raises(TaxonomyNotFound) as e:
        resolve_taxonomy("inaturalist", store=store)
    msg = str(e.value)
    assert e.value.exit_code == 3
    assert f"inaturalist: not a folder, and store {store.url}: no taxonomy 'inaturalist'" in msg
    assert f"demo (latest demo@{store.latest('demo')}, 1 version)" in msg
    assert "taxoforge publish data/assets/<tree> --name inaturalist" in msg
    assert e.value.available == [f"demo@{store.latest('demo')}"]
    with pytest.raises(TaxonomyNotFound, match="has no version 'beef'"):
        resolve_taxonomy("demo@beef", store=store)
    with pytest.raises(TaxonomyNotFound, match="no snapshot store at"):
        resolve_taxonomy("wordnet", store=tmp_path / "no-store")
    with pytest.raises(TaxonomyNotFound, match="no such folder"):
        resolve_taxonomy(str(tmp_path / "missing" / "tree"), store=store)


def test_a_snapshot_folder_in_its_store_is_verified_and_cited(store):
    folder = store.local_dir("demo", store.latest("demo"))
    _, cite = resolve_taxonomy(folder, store=store)
    assert cite.ref == f"demo@{store.latest('demo')}" and cite.verified == "store" and cite.local_only
    assert cite.store is None


def test_a_copied_snapshot_folder_is_checked_by_its_content(tmp_path, store):
    version = store.latest("demo")
    copy = tmp_path / "elsewhere" / "demo-snapshot"
    shutil.copytree(store.local_dir("demo", version), copy)
    _, cite = resolve_taxonomy(copy, store=store)
    assert (cite.ref, cite.verified, cite.store, cite.local_only) == (f"demo@{version}", "content", None, True)
    # no store knows it: cited by its content hash, which a store resolves once it has it
    _, cite = resolve_taxonomy(copy, store=tmp_path / "empty-store")
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
        resolve_taxonomy(folder, store=store)
    assert e.value.exit_code == 4 and any("nodes.parquet" in p for p in e.value.problems)
    tables, cite = resolve_taxonomy(folder, store=store, altered="content")
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
        resolve_taxonomy(folder, store=store)


def test_an_altered_copy_in_the_store_is_refused_by_name_too(store):
    version = store.latest("demo")
    _alter_a_label(store.local_dir("demo", version))
    with pytest.raises(AlteredSnapshot, match=f"local copy of demo@{version} does not match") as e:
        resolve_taxonomy(f"demo@{version}", store=store)
    assert e.value.exit_code == 4


def test_a_tree_folder_is_cited_by_content_until_it_is_published(tmp_path, tree):
    """A tree folder was cited `inaturalist_tree@<hash>`, which no store resolves."""
    folder = tmp_path / "data" / "assets" / "demo_tree"
    tree.write(folder)
    st = SnapshotStore(tmp_path / "store")
    tables, cite = resolve_taxonomy(folder, store=st)
    assert cite.ref == f"sha256:{content_id(tree)[1]}" and not cite.published and cite.store is None
    assert cite.taxonomy == "demo_tree" and tables.info["seed"] == 0
    r = st.publish(tables, name="demo")
    assert st.resolve(cite.ref)[1]["version"] == r.version  # the old citation now resolves
    _, cite = resolve_taxonomy(folder, store=st)
    assert (cite.ref, cite.store, cite.published, cite.local_only) == (r.ref, None, True, True)


def test_a_store_given_a_public_url_is_cited_by_it_from_then_on(tmp_path, tree):
    """The public URL a publisher names is recorded in the store's index: every later
    citation (by any reader, with no option) names it; a malformed one is refused."""
    root = tmp_path / "store"
    SnapshotStore(root).publish(tree)
    assert resolve_taxonomy("demo", store=root)[1].local_only
    r = SnapshotStore(root, public_url="https://taxa.example.org/snapshots").publish(tree)  # already there: records it
    assert r.status == "unchanged"
    _, cite = resolve_taxonomy("demo", store=root)
    assert (cite.store, cite.local_only) == ("https://taxa.example.org/snapshots", False)
    assert cite.as_dict()["store"] == "https://taxa.example.org/snapshots"
    assert 'data-store-url="https://taxa.example.org/snapshots"' in (root / "index.html").read_text()
    for bad in ("not a url", "https://h/a b", "javascript:alert(1)"):
        with pytest.raises(SnapshotError, match="bad public URL"):
            SnapshotStore(root, public_url=bad).publish(tree)
    assert resolve_taxonomy("demo", store=root)[1].store == "https://taxa.example.org/snapshots"


def test_tables_in_memory_are_cited_by_content(tmp_path, store, tree):
    _, cite = resolve_taxonomy(tree, store=store)
    assert cite.ref == f"demo@{store.latest('demo')}"
    other = make_tree(random_edges(seed=11))
    _, cite = resolve_taxonomy(other, store=store)
    assert cite.ref == f"sha256:{content_id(other)[1]}"


def test_a_bad_altered_policy_is_refused(store):
    with pytest.raises(ValueError, match="altered='ignore'"):
        resolve_taxonomy("demo", store=store, altered="ignore")


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
    published = SnapshotStore().publish(resolve_taxonomy(folder)[0], name="demo")
    other = SnapshotStore(tmp_path / "another-store")
    other.publish(make_tree(random_edges(seed=11)), name="other")
    refs = set()
    for cwd, store in ((tmp_path / "checkout", None), (tmp_path, None), (tmp_path / "checkout", other),
                       (tmp_path, str(tmp_path / "xdg" / "taxoforge" / ".." / "taxoforge" / "snapshots"))):
        monkeypatch.chdir(cwd)
        for given in (folder, "data/assets/demo_tree" if cwd.name == "checkout" else folder):
            refs.add(resolve_taxonomy(given, store=store)[1].ref)
    assert refs == {published.ref}
    monkeypatch.setenv("TAXOFORGE_STORE", str(tmp_path / "another-store"))  # the variable names the default store
    assert default_store_url() == str(tmp_path / "another-store")
    monkeypatch.setenv("TAXOFORGE_SNAPSHOT_STORE", str(tmp_path / "former"))  # the former name: read, second
    assert default_store_url() == str(tmp_path / "another-store")
    monkeypatch.delenv("TAXOFORGE_STORE")
    assert default_store_url() == str(tmp_path / "former")
