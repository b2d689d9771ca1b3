"""The scoring step of ``make demo``: the shipped example scored through Dagster — a tick of the
model-outputs sensor and the run it requests, on a real instance — as a partition of
``imagenet1k_scores`` against the published ImageNet-1k snapshot, with the code location's own
resources on a temp data folder; the run carries the sensor's run key, so the daemon of
``make dev`` does not score it again."""

from __future__ import annotations

import dagster as dg
import pytest

import assets.imagenet.assets as imagenet_assets
import assets.wordnet.assets as wordnet_assets
from assets.snapshots.assets import snapshot_asset
from pipelines.definitions import build_definitions
from pipelines.demo import EXAMPLE_KEY, score_example
from pipelines.resources import default_resources
from taxoforge.sources.wordnet_data import WordNetUnavailable, ensure_wordnet


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """A data folder holding the materialised ImageNet-1k taxonomy and its published snapshot."""
    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))
    data_dir = tmp_path_factory.mktemp("data")
    built = dg.materialize([*dg.load_assets_from_modules([wordnet_assets, imagenet_assets]),
                            snapshot_asset("imagenet1k", "imagenet1k_taxonomy")],
                           resources=default_resources(str(data_dir)), instance=dg.DagsterInstance.ephemeral())
    assert built.success
    return data_dir


def test_the_example_is_a_materialisation_of_its_scores_asset(data_dir, monkeypatch, tmp_path):
    for var in ("TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE", "TAXOFORGE_MODEL_OUTPUTS_DIR"):
        monkeypatch.delenv(var, raising=False)
    defs = build_definitions(str(data_dir), environ={})
    printed = []
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        assert score_example(defs, instance, echo=printed.append)
        text = "\n".join(printed)
        assert "example-vlm-alpha" in text and "| model |" in text and "imagenet1k_scores" in text
        assert "data/examples/imagenet_example_outputs.jsonl" in text
        key = dg.AssetKey("imagenet1k_scores")
        assert instance.get_materialized_partitions(key) == {EXAMPLE_KEY}
        event = instance.get_latest_materialization_event(key)
        md = event.asset_materialization.metadata
        assert list(md)[0] == "leaderboard" and md["taxonomy_ref"].value.startswith("imagenet1k@")
        rows = {r.data["model"]: r.data for r in md["leaderboard"].value.records}
        assert rows["example-vlm-alpha"]["rank"] == "1" and "(" in rows["example-vlm-alpha"]["hF"]
        # the run is the one the sensor asks for: a later tick (make dev's daemon) requests the
        # same run key, which the daemon skips as already launched
        run = instance.get_run_by_id(event.run_id)
        assert run.job_name == "score_imagenet1k_outputs" and run.tags["dagster/sensor_name"] == "model_outputs_sensor"
        with dg.build_sensor_context(instance=instance, resources={"scoring": defs.resources["scoring"]}) as ctx:
            again = defs.resolve_sensor_def("model_outputs_sensor")(ctx)
        (request,) = [r for r in again.run_requests if r.partition_key == EXAMPLE_KEY]
        assert request.run_key == run.tags["dagster/run_key"]


def test_nothing_built_reports_and_returns_false(tmp_path, monkeypatch):
    for var in ("TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE", "TAXOFORGE_MODEL_OUTPUTS_DIR"):
        monkeypatch.delenv(var, raising=False)
    printed = []
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        assert not score_example(build_definitions(str(tmp_path / "empty"), environ={}), instance,
                                 echo=printed.append)
    assert "Scoring the example outputs failed" in printed[-1] and "imagenet1k" in printed[-1]



def test_demo_concurrency_follows_the_variable_and_the_cores(monkeypatch):
    from pipelines.demo import CONCURRENCY_VARIABLE, demo_concurrency

    assert demo_concurrency({CONCURRENCY_VARIABLE: "1"}) == 1
    assert demo_concurrency({CONCURRENCY_VARIABLE: " 3 "}) == 3
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert demo_concurrency({}) == 1
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert demo_concurrency({}) == 2
    for bad in ("0", "two", "-1"):
        with pytest.raises(ValueError, match=CONCURRENCY_VARIABLE):
            demo_concurrency({CONCURRENCY_VARIABLE: bad})


def test_the_embedded_default_splits_into_parts_sharing_no_asset(tmp_path):
    from pipelines.demo import independent_parts

    defs = build_definitions(str(tmp_path), environ={})
    graph = defs.resolve_asset_graph()
    (whole,) = independent_parts(defs, 1)
    parts = independent_parts(defs, 2)
    assert sorted(k for p in parts for k in p) == whole  # every asset once
    assert len(parts) == 2 and any("inaturalist_tree" in p for p in parts)
    wordnet = next(p for p in parts if "wordnet_tree" in p)
    assert {"imagenet1k_taxonomy", "wordnet_snapshot", "imagenet1k_snapshot", "wordnet_files"} <= set(wordnet)
    for part in parts:  # no dependency crosses from one part to another
        others = {dg.AssetKey.from_user_string(k) for p in parts if p is not part for k in p}
        for key in part:
            assert not (set(graph.get(dg.AssetKey.from_user_string(key)).parent_keys) & others)
    assert independent_parts(defs, 5) == parts  # no more lists than parts


def test_meteor_table_prepared_for_the_example_is_the_one_its_scoring_opens(tmp_path, monkeypatch):
    from pipelines.demo import prepare_meteor_table
    from taxoforge.scores.measures.meteor import synonym_table, table_path

    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    said = []
    assert prepare_meteor_table(echo=said.append)
    assert table_path(None).is_file() and "METEOR's synonym table ready" in said[0]
    stored = table_path(None).stat().st_mtime_ns
    assert synonym_table().synonyms("dog") and table_path(None).stat().st_mtime_ns == stored  # opened, not rebuilt


def test_meteor_table_without_wordnet_is_reported_not_raised(monkeypatch):
    import taxoforge.scores.measures.meteor as meteor
    from pipelines.demo import prepare_meteor_table

    def missing(*args, **kwargs):
        raise WordNetUnavailable("WordNet 3.0 is not installed")

    monkeypatch.setattr(meteor, "synonym_table", missing)
    said = []
    assert not prepare_meteor_table(echo=said.append)
    assert said == ["METEOR's synonym table not prepared: WordNetUnavailable: WordNet 3.0 is not installed"]


def test_other_parts_start_only_with_concurrency_and_a_part_past_the_last_builds_nothing(monkeypatch, tmp_path):
    from pipelines.demo import _materialise_part, start_other_parts

    assert start_other_parts(1) == (None, [])
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    assert _materialise_part(5, 2) == {"success": True, "built": [], "checks": [], "failures": []}
    assert not any(tmp_path.iterdir())  # found no part 5 of 2, so opened no instance
