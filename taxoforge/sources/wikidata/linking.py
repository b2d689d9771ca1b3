"""Dataset labels → Wikidata nodes, with the one label resolver (:mod:`taxoforge.links.resolve`).

Two kinds of label sets:

* **QID lists** such as OVEN's (``qid<TAB>label``): every label carries its QID as
  ``external_id`` and links by id when the node is in the tree, else by name.
* **Name-only lists** such as the class names of Food101, Stanford Cars, SUN397, FGVC
  Aircraft or Oxford Flowers: linked by exact, then normalised, match against the English
  labels and aliases of the tree; a name shared by several items is *ambiguous* and
  reported with its candidates, a name found nowhere is *unmatched*.

Readers accept the formats of ``../shared/data/label_sets``: ``idx,folder_name,class_name``
CSV (lmms-owc), ``class_name<TAB>…`` TSV (FOCI), and ``{dataset: [names]}`` JSON
(clip_benchmark).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from taxoforge.links.resolve import resolution_summary, resolve_labels
from taxoforge.sources.wikidata.ids import QID_RE
from taxoforge.trees.tables import TreeTables

__all__ = ["read_qid_label_set", "read_name_label_set", "link_to_wikidata", "link_report", "qid_to_node"]


def qid_to_node(qid: str) -> str | None:
    """``Q146`` → ``wd:Q146``; anything that is not a QID → ``None``.

    Parameters
    ----------
    qid : str
        A QID.

    Returns
    -------
    str or None
        ``Q146`` → ``wd:Q146``; anything that is not a QID → ``None``.
    """
    return f"wd:{qid}" if isinstance(qid, str) and QID_RE.fullmatch(qid) else None


def read_qid_label_set(path: str | os.PathLike, *, dataset: str = "oven") -> pl.DataFrame:
    """Read a ``qid<TAB>label`` file with a header (e.g. OVEN's candidate list) as a label set
    (``dataset``, ``label_id`` = QID, ``label_text``, ``external_id`` = QID).

    Raises ``ValueError`` naming the file and line of a value that is not a QID.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    dataset : str, optional
        The dataset's name.

    Returns
    -------
    polars.DataFrame
        The label set.
    """
    path = Path(path)
    df = pl.read_csv(path, separator="\t", quote_char=None, infer_schema=False)
    if "qid" not in df.columns:
        raise ValueError(f"{path}: expected a header with a 'qid' column, got {df.columns}")
    text_col = "label" if "label" in df.columns else df.columns[1]
    bad = df.with_row_index("row").filter(~pl.col("qid").str.contains(r"^Q[1-9][0-9]*$") | pl.col("qid").is_null())
    if bad.height:
        r = bad.row(0, named=True)
        raise ValueError(f"{path}:{r['row'] + 2}: {r['qid']!r} is not a Wikidata QID")
    df = df.unique("qid", keep="first", maintain_order=True)
    return pl.DataFrame(
        {
            "dataset": [dataset] * df.height,
            "label_id": df["qid"],
            "label_text": df[text_col],
            "external_id": df["qid"],
        },
        schema={"dataset": pl.String, "label_id": pl.String, "label_text": pl.String, "external_id": pl.String},
    )


def read_name_label_set(path: str | os.PathLike, *, dataset: str | None = None, key: str | None = None) -> pl.DataFrame:
    """Read a name-only label set (module docstring). ``label_id`` is the class index in the
    file (``idx`` column when there is one), ``external_id`` is null. ``key`` picks the
    dataset of a clip_benchmark JSON file. ``dataset`` defaults to the file's stem (or key).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    dataset : str, optional
        The dataset's name.
    key : str, optional
        The dataset of a clip_benchmark file holding several.

    Returns
    -------
    polars.DataFrame
        The label set.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        doc = json.loads(path.read_text(encoding="utf-8"))
        if key is None or key not in doc:
            raise ValueError(f"{path}: give key= one of {sorted(doc)}")
        names = [str(x) for x in doc[key]]
        ids = [str(i) for i in range(len(names))]
        dataset = dataset or key
    elif suffix in (".csv", ".tsv"):
        df = pl.read_csv(path, separator="\t" if suffix == ".tsv" else ",", quote_char='"', infer_schema=False)
        if "class_name" not in df.columns:
            raise ValueError(f"{path}: expected a 'class_name' column, got {df.columns}")
        names = df["class_name"].to_list()
        ids = df["idx"].to_list() if "idx" in df.columns else [str(i) for i in range(df.height)]
        empty = [i for i, n in enumerate(names) if not n]
        if empty:
            raise ValueError(f"{path}:{empty[0] + 2}: empty class_name")
        dataset = dataset or path.stem.removesuffix("_metadata").removesuffix("_classes")
    else:
        raise ValueError(f"{path}: unknown label set format (expected .csv, .tsv or .json)")
    return pl.DataFrame(
        {"dataset": [dataset] * len(names), "label_id": ids, "label_text": names, "external_id": [None] * len(names)},
        schema={"dataset": pl.String, "label_id": pl.String, "label_text": pl.String, "external_id": pl.String},
    )


def link_to_wikidata(labels: pl.DataFrame, tree: TreeTables | pl.DataFrame) -> pl.DataFrame:
    """Link ``labels`` to the nodes of a Wikidata tree: by QID where there is one, then by
    exact, then normalised, English label or alias (a label beats an alias of another node).

    ``tree`` is the tree (preferred) or its names table. With the tree, nodes that have no
    name in the language still link by QID: each node also gets its QID as a name of kind
    ``qid``. Returns the links table.

    Parameters
    ----------
    labels : polars.DataFrame
        The labels.
    tree : TreeTables or polars.DataFrame
        The tree.

    Returns
    -------
    polars.DataFrame
        The links table.
    """
    nodes = None
    if isinstance(tree, TreeTables):
        ids = tree.nodes.select("node_id").filter(pl.col("node_id").str.starts_with("wd:Q"))
        names = pl.concat(
            [tree.names.select("node_id", "name", "kind"),
             ids.select("node_id", pl.col("node_id").str.strip_prefix("wd:").alias("name"), pl.lit("qid").alias("kind"))]
        )
        nodes = tree.nodes
    else:
        names = tree
    return resolve_labels(labels, names, nodes, external_id_to_node=qid_to_node, prefer_kinds=("label", "alias", "qid"))


def link_report(links: pl.DataFrame) -> dict:
    """Counts per dataset and status, plus the ambiguous and unmatched labels as tables.

    Parameters
    ----------
    links : polars.DataFrame
        The links table.

    Returns
    -------
    dict
        Counts per dataset and status, plus the ambiguous and unmatched labels as
        tables.
    """
    per = {}
    for ds in sorted(links["dataset"].unique().to_list()):
        per[ds] = resolution_summary(links.filter(pl.col("dataset") == ds))
    return {
        "summary": resolution_summary(links),
        "per_dataset": per,
        "ambiguous": links.filter(pl.col("status") == "ambiguous").select("dataset", "label_id", "label_text", "candidates"),
        "unmatched": links.filter(pl.col("status") == "unmatched").select("dataset", "label_id", "label_text"),
    }
