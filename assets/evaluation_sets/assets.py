"""Evaluation sets: VLM4Bio-style multiple-choice questions built from a frozen snapshot,
one asset per taxonomy, partitioned by difficulty (easy / medium / hard).

Lineage::

    inaturalist_snapshot ──> inaturalist_multiple_choice   [easy | medium | hard]
    imagenet1k_snapshot  ──> imagenet1k_multiple_choice    [easy | medium | hard]

Each materialisation loads the exact snapshot version the upstream snapshot asset last
published (``NAME@VERSION``, recorded in the metadata), builds the questions with
:func:`taxoforge.evaluation.multiple_choice.build_questions`, and writes
``<data dir>/evaluation_sets/<asset>/<difficulty>.jsonl`` (plus ``.skipped.jsonl`` and the
set's metadata ``.info.json``: the distractor pool, how the labels resolved) —
so "which snapshot generated these questions" is answered by the asset's lineage and its
metadata. The data version is the SHA-256 of the file: the same snapshot, labels and seed
give the same data version.

Config: ``labels_file`` (ground truths, one per question; empty: ``questions`` ground
truths drawn with the seed from the tree), ``questions``, ``options``, ``seed``,
``organism``, ``variant`` (``standard``, ``nota``, ``fct``), ``pool`` (where distractors come
from: ``labels``, ``tree``, or a clade; default: the taxa of ``labels_file``, else the tree).
"""

import hashlib
import json

import dagster as dg

from assets.common.resources import DataDirResource, SnapshotStoreResource
from assets.common.tags import TAXOFORGE_TEAM
from taxoforge.evaluation import multiple_choice as mc
from taxoforge.evaluation.reasoning_tests import fct_variant, nota_variant
from taxoforge.files import write_text_atomic
from taxoforge.files.labels import LabelFileError, read_labels
from taxoforge.markdown import markdown_table
from taxoforge.snapshots.load import load_taxonomy
from taxoforge.trees.ranked_tree import RankedTree

GROUP = "evaluation_sets"
DIFFICULTY_PARTITIONS = dg.StaticPartitionsDefinition(list(mc.DIFFICULTIES))

#: asset name prefix → (snapshot name, the word for the organism in the question)
SETS: dict[str, tuple[str, str]] = {
    "inaturalist": ("inaturalist", "organism"),
    "imagenet1k": ("imagenet1k", "object"),
}


class MultipleChoiceConfig(dg.Config):
    """How the questions are drawn (see the module docstring)."""

    labels_file: str = ""
    questions: int = 1000
    options: int = 4
    seed: int = 0
    organism: str = ""
    variant: str = "standard"
    #: where distractors come from: "labels", "tree", or a clade name or node id; empty: the
    #: taxa of labels_file when one is given (as VLM4Bio draws from its dataset), else the tree
    pool: str = ""


def _snapshot_ref(context: dg.AssetExecutionContext, snapshot_asset: str) -> str:
    """``NAME@VERSION`` the upstream snapshot asset last published."""
    event = context.instance.get_latest_materialization_event(dg.AssetKey(snapshot_asset))
    mat = event.asset_materialization if event is not None else None
    ref = mat.metadata.get("snapshot") if mat is not None else None
    if ref is None:
        raise dg.Failure(description=f"{snapshot_asset} has not been published yet: materialise it first")
    return str(ref.value)


def multiple_choice_asset(name: str, snapshot: str, organism: str = "organism") -> dg.AssetsDefinition:
    """The asset ``<name>_multiple_choice`` built from the snapshot asset ``<snapshot>_snapshot``."""
    snapshot_asset = f"{snapshot}_snapshot"

    @dg.asset(
        name=f"{name}_multiple_choice",
        group_name=GROUP,
        owners=[TAXOFORGE_TEAM],
        kinds={"python", "jsonl"},
        partitions_def=DIFFICULTY_PARTITIONS,
        deps=[dg.AssetKey(snapshot_asset)],
        description=(
            f"VLM4Bio-style multiple-choice questions from the `{snapshot}` snapshot, one partition per "
            "difficulty: easy (other genera, other families where possible), medium (same genus), hard "
            "(same species: subspecies). Seeded: the same snapshot, labels and seed give the same file. "
            "Every question is checked (each distractor's relation to its answer) before it is written."
        ),
    )
    def _questions(context: dg.AssetExecutionContext, config: MultipleChoiceConfig,
                   snapshot_store: SnapshotStoreResource, data_dir: DataDirResource) -> dg.MaterializeResult:
        difficulty = context.partition_key
        ref = _snapshot_ref(context, snapshot_asset)
        tree = RankedTree.of(load_taxonomy(ref, store=snapshot_store.store()))
        word = config.organism or organism
        try:
            if config.labels_file:
                gts = read_labels(config.labels_file)
            else:
                gts = mc.sample_ground_truths(tree, difficulty, config.questions, seed=config.seed,
                                              options=config.options)
            pool = config.pool or ("labels" if config.labels_file else "tree")
            qs = mc.build_questions(tree, gts, difficulty, options=config.options, seed=config.seed, organism=word,
                                    pool=pool)
        except (mc.TreeTooShallow, LabelFileError, ValueError) as e:
            raise dg.Failure(description=f"{ref}: {e}") from e
        problems = mc.check_questions(tree, qs, difficulty)
        if problems.height:
            raise dg.Failure(description=f"{problems.height} invalid question(s)",
                             metadata={"problems": dg.MetadataValue.md(markdown_table(problems, max_rows=20))})
        if config.variant == "nota":
            qs = nota_variant(qs)
        elif config.variant == "fct":
            qs = fct_variant(qs, seed=config.seed)
        elif config.variant != "standard":
            raise dg.Failure(description=f"variant must be standard, nota or fct, not {config.variant!r}")
        folder = data_dir.folder("evaluation_sets", f"{name}_multiple_choice")
        path = qs.write_jsonl(folder / f"{difficulty}.jsonl")
        qs.write_info(folder / f"{difficulty}.info.json")
        if qs.skipped.height:
            write_text_atomic(folder / f"{difficulty}.skipped.jsonl",
                                  "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in qs.skipped.to_dicts()))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        preview = qs.questions.select("id", "question", "target-class", "option-gt").head(5)
        return dg.MaterializeResult(
            metadata={
                "snapshot": ref,
                "difficulty": difficulty,
                "variant": config.variant,
                "questions": qs.questions.height,
                "skipped": qs.skipped.height,
                "skipped_by_reason": dg.MetadataValue.json(qs.info["skipped_by_reason"]),
                "seed": config.seed,
                "options": config.options,
                "mode": qs.info["mode"],
                "pool": dg.MetadataValue.json({k: v for k, v in qs.info["pool"].items() if k != "node_ids"}),
                "ground_truths_resolved": dg.MetadataValue.json(qs.info["resolution"]),
                "sha256": digest,
                "path": dg.MetadataValue.path(str(path.resolve())),
                "preview": dg.MetadataValue.md(markdown_table(preview, max_rows=5)),
            },
            data_version=dg.DataVersion(digest[:16]),
        )

    return _questions


multiple_choice_assets = [multiple_choice_asset(name, snap, word) for name, (snap, word) in SETS.items()]
