"""The model-output sensor requests one scoring run per new or changed file, against the
taxonomy its folder names."""

import json
import os
import time

import dagster as dg

from assets.common.resources import ScoringResource
from assets.scoring.assets import SCORED_TAXONOMIES, model_output_files, partitions_for
from assets.scoring.jobs import scoring_jobs
from assets.scoring.sensors import model_outputs_sensor_for

#: The sensor of a code location that scores against every taxonomy.
model_outputs_sensor = model_outputs_sensor_for(scoring_jobs(SCORED_TAXONOMIES))


def _write(path, records, age=10):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    t = time.time() - age
    os.utime(path, (t, t))


def _tick(instance, res, cursor=None):
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"scoring": res})
    return model_outputs_sensor(ctx), ctx


def test_model_outputs_sensor_requests_one_run_per_new_or_changed_file(tmp_path):
    outputs = tmp_path / "model_outputs"
    (outputs / "batch1").mkdir(parents=True)
    res = ScoringResource(outputs_dir=str(outputs), scores_dir=str(tmp_path / "scores"))
    instance = dg.DagsterInstance.ephemeral()
    out, _ = _tick(instance, res)
    assert isinstance(out, dg.SkipReason)

    _write(outputs / "batch1" / "run_a.jsonl", [
        {"id": "1", "model": "m1", "output": "A: Toco Toucan", "label": "r_toco"},
        {"id": "2", "model": "m1", "output": "a bird", "label": "r_toco"},
    ])
    _write(outputs / "notes.txt", [{"ignored": True}])
    _write(outputs / "fresh.jsonl", [{"output": "x", "label": "life"}], age=0)  # still being written
    res1, ctx = _tick(instance, res)
    # no taxonomy.txt, no folder named after a taxonomy: the default (imagenet1k), its asset's job and partitions
    assert [(r.partition_key, r.job_name) for r in res1.run_requests] == [("batch1/run_a.jsonl", "score_imagenet1k_outputs")]
    assert res1.run_requests[0].tags["taxoforge/taxonomy"] == "imagenet1k"
    add = res1.dynamic_partitions_requests[0]
    assert add.partitions_def_name == "imagenet1k_model_outputs" and add.partition_keys == ["batch1/run_a.jsonl"]
    instance.add_dynamic_partitions(partitions_for("imagenet1k").name, ["batch1/run_a.jsonl"])

    # the same file is not requested again; a changed file is
    res2, _ = _tick(instance, res, res1.cursor)
    assert isinstance(res2, dg.SkipReason) or not res2.run_requests
    _write(outputs / "batch1" / "run_a.jsonl", [{"id": "1", "model": "m1", "output": "Toucans", "label": "r_toco"}], age=5)
    res3, _ = _tick(instance, res, res1.cursor)
    assert [r.partition_key for r in res3.run_requests] == ["batch1/run_a.jsonl"]
    assert res3.run_requests[0].run_key != res1.run_requests[0].run_key
    assert not res3.dynamic_partitions_requests  # partition already known


def test_the_sensor_picks_the_taxonomy_per_folder(tmp_path):
    """taxonomy.txt (nearest above the file) wins, then a first-level folder named after a
    taxonomy, then the default; a taxonomy without a snapshot asset goes to the generic
    asset; changing a sidecar re-scores the files under it."""
    outputs = tmp_path / "model_outputs"
    res = ScoringResource(outputs_dir=str(outputs), scores_dir=str(tmp_path / "scores"), taxonomy="imagenet1k")
    rec = [{"id": "1", "output": "x", "label": "y"}]
    _write(outputs / "vlm4bio" / "bird" / "a.jsonl", rec)
    (outputs / "vlm4bio" / "taxonomy.txt").write_text("# VLM4Bio is scored against iNaturalist\ninaturalist\n")
    _write(outputs / "wordnet" / "b.jsonl", rec)
    _write(outputs / "own" / "c.jsonl", rec)
    (outputs / "own" / "taxonomy.txt").write_text("sha256:" + "ab" * 32 + "\n")
    _write(outputs / "d.jsonl", rec)
    instance = dg.DagsterInstance.ephemeral()
    out, _ = _tick(instance, res)
    routes = {r.partition_key: (r.job_name, r.tags["taxoforge/taxonomy"]) for r in out.run_requests}
    assert routes == {"vlm4bio/bird/a.jsonl": ("score_inaturalist_outputs", "inaturalist"),
                      "wordnet/b.jsonl": ("score_wordnet_outputs", "wordnet"),
                      "own/c.jsonl": ("score_model_outputs", "sha256:" + "ab" * 32),
                      "d.jsonl": ("score_imagenet1k_outputs", "imagenet1k")}
    adds = {a.partitions_def_name: a.partition_keys for a in out.dynamic_partitions_requests}
    assert adds == {"inaturalist_model_outputs": ["vlm4bio/bird/a.jsonl"], "wordnet_model_outputs": ["wordnet/b.jsonl"],
                    model_output_files.name: ["own/c.jsonl"], "imagenet1k_model_outputs": ["d.jsonl"]}
    # a pinned version in the sidecar: the same asset, a new run for the files under it
    (outputs / "vlm4bio" / "taxonomy.txt").write_text("inaturalist@0123456789ab\n")
    again, _ = _tick(instance, res, out.cursor)
    assert [(r.partition_key, r.job_name, r.tags["taxoforge/taxonomy"]) for r in again.run_requests] == [
        ("vlm4bio/bird/a.jsonl", "score_inaturalist_outputs", "inaturalist@0123456789ab")]
    # a sidecar naming two taxonomies is not guessed at: its files wait
    (outputs / "vlm4bio" / "taxonomy.txt").write_text("inaturalist\nwordnet\n")
    bad, _ = _tick(instance, res, again.cursor)
    assert isinstance(bad, dg.SkipReason) or not bad.run_requests


def test_the_sensor_scores_a_harness_run_folder_as_taxoforge_score_reads_it(tmp_path):
    """A VLMEvalKit work_dir dropped whole: its prediction file is scored once; its judge table
    (joined to the predictions when they are scored), score table, run status and the model
    folder's link to the latest run's file are not partitions of their own."""
    outputs = tmp_path / "model_outputs"
    run = outputs / "m" / "T20250101-120000"
    run.mkdir(parents=True)
    (run / "status.json").write_text(json.dumps({"eval_id": run.name, "model_name": "m", "datasets": {
        "MMBench": {"prediction_file": "m_MMBench.tsv"}}}))
    for name in ("m_MMBench.tsv", "m_MMBench_gpt-4o-mini.tsv", "m_MMBench_acc.csv"):
        (run / name).write_text("index\tquestion\tanswer\tprediction\n0\tq\tA\tA\n")
    (outputs / "m" / "m_MMBench.tsv").symlink_to(run / "m_MMBench.tsv")
    old = time.time() - 10
    for p in [*run.iterdir(), outputs / "m" / "m_MMBench.tsv"]:
        os.utime(p, (old, old), follow_symlinks=False)
    res = ScoringResource(outputs_dir=str(outputs), scores_dir=str(tmp_path / "scores"))
    out, _ = _tick(dg.DagsterInstance.ephemeral(), res)
    assert [r.partition_key for r in out.run_requests] == ["m/T20250101-120000/m_MMBench.tsv"]
