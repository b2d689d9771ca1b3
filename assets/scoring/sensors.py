"""``model_outputs_sensor``: new model-output files scored.

It watches ``ScoringResource.outputs_dir`` (default ``<data dir>/model_outputs/``) for
``.jsonl``, ``.ndjson``, ``.csv``, ``.tsv`` and ``.parquet`` files and picks each one's
taxonomy by its folder (:mod:`assets.scoring.folders`): the nearest ``taxonomy.txt``
in its folder or above (one line: ``NAME``, ``NAME@VERSION``, ``sha256:HEX`` or a tree
folder), else a first-level folder named after a taxonomy (``model_outputs/inaturalist/…``),
else ``ScoringResource.taxonomy`` (``imagenet1k``). A new file — or a changed one: its
size, modification time or taxonomy differs — becomes a partition of the scoring asset
of that taxonomy (``<name>_scores``, downstream of ``<name>_snapshot``; others:
``model_output_scores``), keyed by its path relative to the folder, and one run of that
asset's job is requested for it (:mod:`assets.scoring.assets`). A sidecar that cannot be read
is logged and its files wait until it is fixed. Files modified in the last two seconds
wait for the next tick (write, then rename). One file that cannot be taken — a name that is
not UTF-8, a FIFO, a folder that cannot be read — is logged and skipped; the others are
scored in the same tick.
"""


import json
import time
from collections.abc import Mapping
from typing import Any
from pathlib import Path

import dagster as dg

from assets.common.resources import ScoringResource
from assets.scoring.assets import SUFFIXES, model_output_files, partitions_for, taxonomy_rule
from assets.scoring.folders import taxonomy_name
from assets.scoring.jobs import score_model_outputs
from taxoforge.files.drop_folder import scan_drop_folder
from taxoforge.scores.readers.run_folders import classify

__all__ = ["model_outputs_sensor_for"]

#: A model-output file younger than this (seconds) may still be being written.
MIN_AGE_S = 2.0


def _scan(folder: Path, now: float, log=None) -> dict[str, str]:
    """``{path relative to folder: "<mtime ns>-<size>"}`` of the model-output files old enough to
    score. A file that cannot be taken (a name that is not UTF-8, a FIFO, a folder that cannot be
    read: :func:`taxoforge.files.drop_folder.scan_drop_folder`) is logged and skipped, and the
    others are scored. So is a file that holds no answers as ``taxoforge score`` reads run
    folders (:func:`taxoforge.scores.readers.run_folders.classify`): a harness's score or status
    table, or a VLMEvalKit judge table whose prediction file lies beside it (the judge's verdicts
    join that file's rows when it is scored), and a link to a file the scan reaches by its own
    name (VLMEvalKit links each model's latest run files into the model's folder)."""
    scan = scan_drop_folder(folder, SUFFIXES, min_age_s=MIN_AGE_S, now=now)
    skipped = list(scan.skipped)
    files = {}
    root = folder.resolve()
    for rel, sig in scan.files.items():
        path = folder / rel
        if path.is_symlink():
            target = path.resolve()
            inside = target.is_relative_to(root) and target.relative_to(root).as_posix()
            if inside in scan.files:
                skipped.append((rel, f"a link to {inside}, scored under that name"))
                continue
        role = classify(path)
        if role.role == "skip":
            skipped.append((rel, role.reason))
        elif role.role == "judge" and role.of is not None and role.of.is_file():
            skipped.append((rel, f"a judge table: its verdicts join {role.of.name} when that file is scored"))
        else:
            files[rel] = sig
    for what, why in skipped:
        if log is not None:
            log.warning(f"{what}: not scored: {why}")
    return files


def model_outputs_sensor_for(jobs: Mapping[str, Any]) -> dg.SensorDefinition:
    """The sensor routing each file to ``<name>_scores`` through ``jobs[name]`` when ``name`` is
    one of the taxonomies with a scoring asset in the code location (the keys of ``jobs``,
    :func:`assets.scoring.jobs.scoring_jobs`), else to ``model_output_scores``."""
    jobs = dict(jobs)

    @dg.sensor(name="model_outputs_sensor", jobs=[score_model_outputs, *(jobs[n] for n in sorted(jobs))],
               minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
               description="New or changed files in the model-outputs folder → one scoring run per file, against "
                           "the taxonomy its folder names (taxonomy.txt, a folder named after a taxonomy, else the "
                           "default). A folder is not an asset, so this stays a sensor.")
    def _sensor(context: dg.SensorEvaluationContext, scoring: ScoringResource):
        return _score_new_files(context, scoring, jobs)

    return _sensor


def _score_new_files(context: dg.SensorEvaluationContext, scoring: ScoringResource,
                     jobs: Mapping[str, Any]):
    folder = Path(scoring.outputs_dir)
    if not folder.is_dir():
        return dg.SkipReason(f"{folder} does not exist yet: drop model-output files there")
    seen = json.loads(context.cursor) if context.cursor else {}
    found, routes = {}, {}
    for k, sig in _scan(folder, time.time(), context.log).items():
        try:
            rule = taxonomy_rule(scoring, k)
        except (OSError, ValueError) as e:  # an unreadable sidecar: say so, retry on the next tick
            context.log.warning(f"{k}: not scored yet: {e}")
            continue
        if rule is None:
            context.log.warning(f"{k}: no taxonomy (no taxonomy.txt above it, no default): not scored")
            continue
        found[k], routes[k] = f"{sig}|{rule.ref}", rule.ref
    changed = {k: sig for k, sig in found.items() if seen.get(k) != sig}
    if not changed:
        return dg.SkipReason(f"no new files in {folder}")
    adds: dict[str, list[str]] = {}
    requests = []
    for k, sig in changed.items():
        name = taxonomy_name(routes[k])
        parts = partitions_for(routes[k]) if name in jobs else model_output_files
        if k not in set(context.instance.get_dynamic_partitions(parts.name)):
            adds.setdefault(parts.name, []).append(k)
        requests.append(dg.RunRequest(run_key=f"{k}@{sig}", partition_key=k,
                                      job_name=jobs.get(name, score_model_outputs).name,
                                      tags={"taxoforge/taxonomy": routes[k]}))
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[dg.AddDynamicPartitionsRequest(name, keys) for name, keys in adds.items()],
        cursor=json.dumps({**seen, **found}, sort_keys=True),
    )
