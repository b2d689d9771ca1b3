"""``taxoforge subset TREE LABELS -o OUT``: every label is resolved to a node of TREE by the
label linker (node id, external id, name, synonym, epithet variant, genus transfer, and last
a partial species or genus ground truth: :func:`taxoforge.links.label_sets.label_set_subtree`);
OUT is the smallest subtree holding the resolved nodes, with the label texts as names and the
whole links table (unresolved labels too, with what was tried). OUT is a tree folder
(``nodes.parquet`` …, ``info.json`` with the parent tree's citation and provenance): score
against it, or publish it with ``taxoforge publish OUT --name NAME``.

Exit codes: 0 ok; 2 bad usage or an unreadable labels file; 3 TREE not found; 4 TREE fails
verification; 8 download interrupted; 10 fewer than ``--min-linked`` of the labels resolved
(OUT is still written; the unresolved labels are listed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from taxoforge.cli_output import emit_json, fail as cli_fail, handle_errors
from taxoforge.files import atomic_directory
from taxoforge.files.labels import LabelFileError, read_labels
from taxoforge.links.label_sets import label_set_subtree
from taxoforge.snapshots.open import open_taxonomy

__all__ = ["subset_cmd", "EXIT_TOO_FEW_LINKED"]

EXIT_TOO_FEW_LINKED = 10
_TREE_FILES = frozenset({"nodes.parquet", "names.parquet", "links.parquet", "report.parquet", "info.json"})


def _check_replaceable(out: Path) -> None:
    if not out.exists():
        return
    if not out.is_dir():
        raise click.UsageError(f"{out}: exists and is not a folder")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in _TREE_FILES)
    if foreign:
        raise click.UsageError(f"{out}: holds files that are not a tree's ({', '.join(foreign[:5])}); "
                               "write the taxonomy to a new or empty folder")


@click.command("subset", epilog="Exit codes: 0 ok, 2 usage or unreadable labels, 3 tree not found, "
                                 "4 verification failed, 8 download interrupted, 10 too few labels resolved, "
                                 "11 output not writable (no space left, a file where a folder goes, -o a symlink).")
@click.argument("tree")
@click.argument("labels", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Tree folder to write (replaced whole when it is an earlier subset).")
@click.option("--name", default=None, help="Name of the new taxonomy (default: OUT's folder name).")
@click.option("--dataset", default=None, help="Dataset name of the labels (default: the taxonomy's name).")
@click.option("--label-column", default=None, help="Label column of a CSV/TSV/JSONL/Parquet LABELS file.")
@click.option("--id-column", default=None, help="Column of the labels' own ids (default: the label text).")
@click.option("--external-id-column", default=None,
              help="Column of external ids (wnid, QID, iNaturalist id) to resolve by first.")
@click.option("--min-linked", type=click.FloatRange(0, 1), default=0.95, show_default=True, metavar="FRACTION",
              help="Fail (exit code 10) when fewer than this share of the labels resolves.")
@click.option("--store", "store", envvar=["TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE"], default=None, show_envvar=True, metavar="URL",
              help="Snapshot store TREE is looked up in (default: $TAXOFORGE_STORE, else the user data folder's "
                   "~/.local/share/taxoforge/snapshots).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@handle_errors()
def subset_cmd(tree, labels, out, name, dataset, label_column, id_column, external_id_column, min_linked, store,
               as_json):
    """Cut the taxonomy of the label set LABELS (.txt one per line, .csv/.tsv/.jsonl/.parquet
    with a label column) from TREE (a tree or snapshot folder, or NAME[@VERSION] in the
    store): the smallest subtree holding every label's node, written to OUT."""
    import polars as pl

    def fail(msg: str, code: int):
        cli_fail(msg, code, as_json=as_json)

    _check_replaceable(out)
    try:
        table = read_labels(labels, label_column)
    except LabelFileError as e:
        fail(str(e), 2)
    for opt, col in (("--id-column", id_column), ("--external-id-column", external_id_column)):
        if col is not None and col not in table.columns:
            fail(f"{labels}: {opt} {col!r}: no such column; the file's columns are "
                 f"{', '.join(c for c in table.columns if c != 'line')}", 2)
    table = table.with_columns(
        *([pl.col(id_column).cast(pl.String).alias("label_id")] if id_column else []),
        *([pl.col(external_id_column).cast(pl.String).alias("external_id")] if external_id_column else []))
    opened = open_taxonomy(tree, store)
    parent, citation = opened.tables, opened.citation
    name = name or out.name
    try:
        sub, links = label_set_subtree(parent, table, name, dataset=dataset,
                                       info={"parent_citation": citation.as_dict(), "label_file": str(labels)})
    except ValueError as e:
        fail(str(e), EXIT_TOO_FEW_LINKED)
    with atomic_directory(out) as tmp:
        sub.write(tmp)
    s = sub.info["label_set"]
    failed = links.filter(pl.col("status") != "linked")
    share = s["linked"] / s["labels"] if s["labels"] else 0.0
    code = EXIT_TOO_FEW_LINKED if share < min_linked else 0
    summary = {"out": str(out), "taxonomy": name, "parent": citation.as_dict(), "nodes": sub.nodes.height,
               "leaves": int(sub.nodes["is_leaf"].sum()), **s,
               "not_linked": failed.select("label_id", "label_text", "status", "detail").to_dicts(),
               "exit_code": code}
    if as_json:
        emit_json(summary)
    else:
        methods = ", ".join(f"{m} {n}" for m, n in s["by_method"].items())
        click.echo(f"{out}: {name}, {sub.nodes.height:,} nodes ({summary['leaves']:,} leaves) cut from {citation.ref}; "
                   f"{s['linked']:,} of {s['labels']:,} labels resolved ({methods or 'none'}"
                   + (f"; {s['partial']} only to their genus or species" if s["partial"] else "") + ")")
        for lid, text, status, detail in failed.select("label_id", "label_text", "status", "detail").head(20).iter_rows():
            click.echo(f"  {status}: {text!r} — {detail}")
        if failed.height > 20:
            click.echo(f"  … and {failed.height - 20} more (links.parquet in {out})")
        if code:
            click.echo(f"error: only {s['linked']} of {s['labels']} labels resolved ({100 * share:.1f} %, below "
                       f"--min-linked {100 * min_linked:g} %)", err=True)
    sys.exit(code)
