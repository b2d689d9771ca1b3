"""One bad file never stops the rest: the model-outputs sensor skips and reports a file it
cannot name (a name that is not UTF-8), a FIFO, a folder it cannot read — and scores the
others in the same tick."""

from __future__ import annotations

import json
import os
import time

import pytest

from taxoforge.files.drop_folder import scan_drop_folder


def _write(path, age=10):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": "1", "output": "a toucan", "label": "r_toco"}) + "\n")
    t = time.time() - age
    os.utime(path, (t, t))
    return path


def test_a_drop_folder_scan_skips_what_it_cannot_take_and_lists_the_rest(tmp_path):
    folder = tmp_path / "model_outputs"
    _write(folder / "good.jsonl")
    _write(folder / "batch" / "also good.csv")
    bad = os.fsencode(folder) + b"/caf\xe9\xff.jsonl"  # written by a Latin-1 tool
    with open(bad, "w") as fh:
        fh.write("{}\n")
    os.utime(bad, (time.time() - 10, time.time() - 10))
    os.mkfifo(folder / "pipe.jsonl")
    os.symlink(folder, folder / "batch" / "loop")  # a link to a folder is not followed
    scan = scan_drop_folder(folder, {".jsonl", ".csv"})
    assert sorted(scan.files) == ["batch/also good.csv", "good.jsonl"]
    why = dict(scan.skipped)
    assert "its name is not UTF-8" in why["caf\\xe9\\xff.jsonl"]
    assert "not a regular file" in why["pipe.jsonl"]


def test_the_sensor_scores_the_good_files_beside_one_it_cannot_name(tmp_path):
    dg = pytest.importorskip("dagster")
    from assets.common.resources import ScoringResource
    from pipelines.definitions import build_definitions

    model_outputs_sensor = build_definitions().resolve_sensor_def("model_outputs_sensor")

    outputs = tmp_path / "model_outputs"
    _write(outputs / "batch1" / "run_a.jsonl")
    _write(outputs / "batch1" / "run_b.jsonl")
    bad = os.fsencode(outputs) + b"/batch1/caf\xe9\xff.jsonl"
    with open(bad, "w") as fh:
        fh.write("{}\n")
    os.utime(bad, (time.time() - 10, time.time() - 10))
    os.mkfifo(outputs / "batch1" / "pipe.jsonl")
    res = ScoringResource(outputs_dir=str(outputs), scores_dir=str(tmp_path / "scores"))
    instance = dg.DagsterInstance.ephemeral()
    ctx = dg.build_sensor_context(instance=instance, resources={"scoring": res})
    out = model_outputs_sensor(ctx)
    assert sorted(r.partition_key for r in out.run_requests) == ["batch1/run_a.jsonl", "batch1/run_b.jsonl"]
    # what the daemon then stores (partition keys, run keys, the cursor) is all text it can write
    for req in out.dynamic_partitions_requests:
        instance.add_dynamic_partitions(req.partitions_def_name, req.partition_keys)
    for r in out.run_requests:
        r.run_key.encode("utf-8")
    out.cursor.encode("utf-8")
