"""The scoring step of ``make demo``: the shipped example scored against the ImageNet-1k
taxonomy the code location built — its published snapshot (cited ``imagenet1k@VERSION``),
else the asset as the IO manager stores it (cited by its content hash) — with the code
location's own resources on a temp data folder."""

from __future__ import annotations

import dagster as dg
import pytest

import assets.imagenet as imagenet_assets
import assets.wordnet as wordnet_assets
from assets.snapshots import snapshot_asset
from pipelines.definitions import build_definitions
from pipelines.demo import example_taxonomy, score_example
from pipelines.resources import default_resources
from taxoforge.sources.wordnet import WordNetUnavailable, ensure_wordnet


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """A data folder holding the materialised ImageNet-1k taxonomy (no snapshot yet)."""
    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))
    data_dir = tmp_path_factory.mktemp("data")
    modules = [wordnet_assets, imagenet_assets]
    assert dg.materialize(dg.load_assets_from_modules(modules), resources=default_resources(str(data_dir)),
                          instance=dg.DagsterInstance.ephemeral()).success
    return data_dir


def test_the_example_is_scored_against_the_asset_then_the_snapshot(data_dir, monkeypatch):
    monkeypatch.delenv("TAXOFORGE_SNAPSHOT_STORE", raising=False)
    monkeypatch.delenv("TAXOFORGE_STORE", raising=False)
    defs = build_definitions(str(data_dir))
    instance = dg.DagsterInstance.ephemeral()
    printed = []
    assert score_example(defs, instance, echo=printed.append)  # no snapshot store yet: the asset
    text = "\n".join(printed)
    assert "example-vlm-alpha" in text and "| model |" in text
    assert "data/examples/imagenet_example_outputs.jsonl" in text
    assert (data_dir / "scores" / "imagenet_example" / "leaderboard.md").exists()
    from_asset = example_taxonomy(defs, instance)
    assert from_asset.name == "imagenet1k_taxonomy" and from_asset.tables.links.height == 1000
    assert from_asset.ref.startswith("sha256:") and not from_asset.citation.published  # not published yet

    tree = defs.load_asset_value("imagenet1k_taxonomy", instance=instance)
    published = dg.materialize([*dg.load_assets_from_modules([wordnet_assets, imagenet_assets]),
                                snapshot_asset("imagenet1k", "imagenet1k_taxonomy")],
                               selection=["imagenet1k_snapshot"], resources=default_resources(str(data_dir)),
                               instance=instance)
    assert published.success
    from_snapshot = example_taxonomy(defs, instance)
    assert from_snapshot.citation.published and from_snapshot.citation.local_only  # no public URL in the demo
    assert from_snapshot.store is None
    assert from_snapshot.ref == published.get_asset_materialization_events()[0].materialization.metadata[
        "snapshot"].value
    assert from_snapshot.tables.nodes.height == tree.nodes.height
    # the content is the asset's: the same content hash either way
    assert from_snapshot.citation.content_sha256 == from_asset.citation.content_sha256


def test_nothing_built_reports_and_returns_false(tmp_path, monkeypatch):
    monkeypatch.delenv("TAXOFORGE_SNAPSHOT_STORE", raising=False)
    monkeypatch.delenv("TAXOFORGE_STORE", raising=False)
    printed = []
    assert not score_example(build_definitions(str(tmp_path / "empty")), dg.DagsterInstance.ephemeral(),
                             echo=printed.append)
    assert "Scoring the example outputs failed" in printed[-1] and "imagenet1k_taxonomy" in printed[-1]
