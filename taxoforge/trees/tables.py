"""The tree data model: the four tables of a taxonomy (docs/method.md#snapshots) and their Parquet files.

A taxonomy is stored as four tables, each one Parquet file:

``nodes``   one row per tree node: ``node_id``, ``parent_id`` (null for the root),
            ``depth`` (root = 0), ``label`` (display name), ``rank`` (taxonomic rank
            or null), ``is_leaf``.
``names``   every name of a node: ``node_id``, ``name``, ``kind`` (``label``,
            ``alias``, ``lemma``, ``scientific``, ``synonym``, ``vernacular``,
            ``infrageneric`` — a subgenus or section of a genus the tree does not place …),
            ``lang`` (BCP-47 code, ``la`` for scientific names, null if unknown), ``source``
            (where a name another source gave came from: ``wordnet:mallard.n.01``,
            ``wikidata:Q25432``, ``coldp:<dataset>``, its prefix a key of the tree's
            ``source_versions``; null for the tree's own names).
``links``   dataset labels linked to nodes (see :mod:`taxoforge.links`).
``report``  every edge the graph→tree step removed or chose between
            (see :mod:`taxoforge.trees.build`).

Beside them, ``info.json`` holds the tree's provenance (:attr:`TreeTables.info`): the
tie seed (``seed``), the ``cycle_policy``, the ``source_versions`` (release, dump date,
file checksums, query time …) and the build's counts. Publishing a folder copies it into
the snapshot's manifest, so a tree keeps its provenance from build to snapshot to score.

Files are written with :func:`taxoforge.files.write_parquet_atomic` (a temporary name,
then a rename, so a reader never sees half a file), and rows are sorted canonically so
the same content gives the same bytes.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from taxoforge.files import write_bytes_atomic, write_parquet_atomic

__all__ = [
    "in_sorted_order",
    "NODES_SCHEMA",
    "NAMES_SCHEMA",
    "ADDED_COLUMNS",
    "LINKS_SCHEMA",
    "REPORT_SCHEMA",
    "REPORT_KINDS",
    "TABLE_SCHEMAS",
    "SCHEMA_VERSION",
    "TreeTables",
    "INFO_NAME",
    "LOADING_KEYS",
    "provenance",
    "info_json_bytes",
    "read_info",
    "conform",
    "with_is_leaf",
    "write_parquet_atomic",
    "name_kind_counts",
]

SCHEMA_VERSION = 1

NODES_SCHEMA = {
    "node_id": pl.String,
    "parent_id": pl.String,
    "depth": pl.Int32,
    "label": pl.String,
    "rank": pl.String,
    "is_leaf": pl.Boolean,
}
NAMES_SCHEMA = {
    "node_id": pl.String,
    "name": pl.String,
    "kind": pl.String,
    "lang": pl.String,
    "source": pl.String,  # where a name from another source came from ("wordnet:mallard.n.01"); null: the tree's own
}
#: Columns added to a table's schema after its version 1: a table whose added column is null in
#: every row hashes as it did before the column existed, so every snapshot published before keeps
#: its version id (:func:`taxoforge.snapshots.manifest.table_content_hash`).
ADDED_COLUMNS = {"names": ("source",)}
LINKS_SCHEMA = {
    "dataset": pl.String,
    "label_id": pl.String,
    "label_text": pl.String,
    "external_id": pl.String,
    "status": pl.String,  # linked | ambiguous | unmatched
    "method": pl.String,  # taxoforge.links.resolve.METHODS: exact | synonym | genus_transfer | genus … (null if none)
    "node_id": pl.String,  # null unless linked
    "candidates": pl.List(pl.String),  # all candidate node ids (ambiguous: ≥ 2)
    "detail": pl.String,
}
REPORT_SCHEMA = {
    "kind": pl.String,
    "child_id": pl.String,
    "parent_id": pl.String,
    "candidates": pl.List(pl.String),
    "weights": pl.List(pl.Float64),
    "chosen": pl.String,
    "seed": pl.Int64,
    "detail": pl.String,
}
#: Every ``kind`` of a report row, with what it means: the one list the README quotes.
REPORT_KINDS = {
    # the graph → tree step (taxoforge.trees.build.build_tree)
    "excluded_node": "an edge touching a node of the exclusion list, removed with the node",
    "self_loop": "an edge from a node to itself, removed",
    "cycle_back_edge": "a back edge of a depth-first search inside a cycle, removed",
    "abstract_on_cycle": "an edge of the most abstract class on a cycle, removed (policy drop_abstract)",
    "synthetic_root": "a parentless node hung under the synthetic root <source>:root",
    "not_longest": "an edge to a parent that is not on a longest root path, dropped",
    "tie": "a node with several parents on longest root paths: the candidates, weights, choice and seed",
    # the sources
    "unplaced_seed": "a Wikidata seed with no instance-of class and no superclass, left out",
    "non_item_edge": "a Wikidata dump's P279 (or a seed's P31) edge to or from a non-item (a blank node of "
                     "'unknown value', a lexeme, a property), dropped",
    "root_superclass": "a Wikidata dump's edge from the root class up, dropped: the root is not expanded",
    "repeated_statement": "a Wikidata dump's edge stated again, dropped (kept once)",
    "dangling_parent": "a ColDP taxon whose parentID is not in the dataset: it becomes a root",
    "dangling_synonym": "a ColDP synonym of a taxon the dataset does not have, skipped",
    "duplicate_lineage": "an iNaturalist taxon with the same lineage as one with a smaller id, which gets its children",
    "no_lineage_position": "an iNaturalist taxon of a rank between the spine's levels, left out",
    "placed_by_name": "an iNaturalist taxon the file gives no lineage, placed under the only taxon its name points to "
                      "(a species under its genus, a subspecies under its species)",
    "incertae_sedis": "a taxon whose place the source does not give, placed under the node <source>:incertae_sedis "
                      "beside the top ranks",
}
TABLE_SCHEMAS = {
    "nodes": NODES_SCHEMA,
    "names": NAMES_SCHEMA,
    "links": LINKS_SCHEMA,
    "report": REPORT_SCHEMA,
}
# Canonical row order of each table (deterministic bytes).
SORT_KEYS = {
    "nodes": ["node_id"],
    "names": ["node_id", "kind", "name", "lang"],
    "links": ["dataset", "label_id"],
    "report": ["kind", "child_id", "parent_id"],
}


INFO_NAME = "info.json"
#: ``info`` keys that say where the tables were loaded from (a snapshot, its manifest, its
#: store, the citation of it), not what they are: never written to ``info.json`` nor
#: copied into a manifest.
LOADING_KEYS = ("snapshot", "manifest", "store", "citation")


def provenance(info: dict | None) -> dict:
    """``info`` without the :data:`LOADING_KEYS`, made JSON-safe (dates, paths and numpy
    scalars as text, keys as strings): what ``info.json`` and a manifest record.

    >>> provenance({"seed": 0, "snapshot": "t@abc", "source_versions": {"wordnet": "3.0"}})
    {'seed': 0, 'source_versions': {'wordnet': '3.0'}}

    Parameters
    ----------
    info : dict or None
        Provenance and metadata.

    Returns
    -------
    dict
        ``info`` without the :data:`LOADING_KEYS`, made JSON-safe (dates, paths and
        numpy scalars as text, keys as strings): what ``info.json`` and a manifest
        record.
    """
    kept = {str(k): v for k, v in (info or {}).items() if k not in LOADING_KEYS}
    return json.loads(json.dumps(kept, default=str))


def info_json_bytes(info: dict | None) -> bytes:
    """The bytes of ``info.json``: :func:`provenance` of ``info``, keys sorted, two-space
    indent, final newline (the same info gives the same bytes).

    Parameters
    ----------
    info : dict or None
        Provenance and metadata.

    Returns
    -------
    bytes
        The bytes of ``info.json``: :func:`provenance` of ``info``, keys sorted,
        two-space indent, final newline (the same info gives the same bytes).
    """
    return (json.dumps(provenance(info), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def read_info(folder: str | os.PathLike) -> dict:
    """The ``info.json`` of a tree folder (``{}`` when there is none). ``ValueError`` naming
    the file when it is not a JSON object.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.

    Returns
    -------
    dict
        The ``info.json`` of a tree folder (``{}`` when there is none).
    """
    path = Path(folder) / INFO_NAME
    if not path.exists():
        return {}
    try:
        info = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(info, dict):
        raise ValueError(f"{path}: expected a JSON object (the tree's provenance), got {type(info).__name__}")
    return info


def conform(df: pl.DataFrame | None, table: str) -> pl.DataFrame:
    """Cast ``df`` to the schema of ``table`` (adding missing nullable columns, in canonical
    column order) and sort its rows canonically. Raises ``ValueError`` naming the table and
    the columns if a required key column is missing.

    Parameters
    ----------
    df : polars.DataFrame or None
        The table.
    table : str
        ``"nodes"``, ``"names"``, ``"links"`` or ``"report"``.

    Returns
    -------
    polars.DataFrame
        Cast ``df`` to the schema of ``table`` (adding missing nullable columns, in
        canonical column order) and sort its rows canonically.
    """
    schema = TABLE_SCHEMAS[table]
    if df is None:
        return pl.DataFrame(schema=schema)
    missing_keys = [c for c in SORT_KEYS[table][:1] if c not in df.columns]
    if missing_keys:
        raise ValueError(f"table {table!r}: missing required column(s) {missing_keys}; got {df.columns}")
    cols = []
    for name, dtype in schema.items():
        if name in df.columns:
            cols.append(pl.col(name).cast(dtype))
        else:
            cols.append(pl.lit(None, dtype=dtype).alias(name))
    out = df.select(cols)
    if in_sorted_order(out, SORT_KEYS[table]):  # read back from a tree folder: in order already
        return out
    return out.sort(SORT_KEYS[table], nulls_last=True, maintain_order=True)


def in_sorted_order(df: pl.DataFrame, by: list) -> bool:
    """Whether ``df.sort(by, nulls_last=True, maintain_order=True)`` would give ``df`` as it is:
    every row compares less than or equal to the next, key by key (nulls last), in one pass
    over the rows instead of a sort.

    A key whose values do not compare (where polars cannot order them) answers False, and the
    caller sorts; so does NaN in a float key, which compares unequal to itself.

    Parameters
    ----------
    df : polars.DataFrame
        The table.
    by : list of polars.Expr or str
        The sort keys, most significant first.

    Returns
    -------
    bool

    Examples
    --------
    >>> in_sorted_order(pl.DataFrame({"a": [1, 1, 2], "b": ["x", "y", None]}), ["a", "b"])
    True
    >>> in_sorted_order(pl.DataFrame({"a": [1, 1, 2], "b": [None, "y", "x"]}), ["a", "b"])
    False
    """
    if df.height <= 1:
        return True
    keys = df.select(pl.col(e) if isinstance(e, str) else e for e in by)
    tied = None  # pairs of neighbouring rows equal on every key so far: the next key orders them
    try:
        for column in keys.get_columns():
            a, b = column.slice(0, df.height - 1), column.slice(1)
            less = (a < b).fill_null(False) | (a.is_not_null() & b.is_null())  # nulls last
            same = a.eq_missing(b)
            if tied is None:
                if not (less | same).all():
                    return False
                tied = same
            else:
                if (tied & ~(less | same)).any():
                    return False
                tied = tied & same
            if not tied.any():  # every pair told apart: the later keys cannot reorder them
                return True
    except (pl.exceptions.PolarsError, TypeError):  # keys that do not compare: sort, as ever
        return False
    return True


def with_is_leaf(nodes: pl.DataFrame) -> pl.DataFrame:
    """``nodes`` with its ``is_leaf`` column (re)computed: true for every node that is no
    node's parent. (:attr:`taxoforge.trees.taxonomy.Taxonomy.is_leaf` is the same flag as an
    array over a validated tree.)

    >>> nodes = pl.DataFrame({"node_id": ["r", "a", "b"], "parent_id": [None, "r", "a"]})
    >>> with_is_leaf(nodes)["is_leaf"].to_list()
    [False, False, True]

    Parameters
    ----------
    nodes : polars.DataFrame
        The nodes table.

    Returns
    -------
    polars.DataFrame
        ``nodes`` with its ``is_leaf`` column (re)computed: true for every node that is
        no node's parent.
    """
    parents = nodes["parent_id"].drop_nulls().unique()
    return nodes.with_columns((~pl.col("node_id").is_in(parents.implode())).alias("is_leaf"))


@dataclass
class TreeTables:
    """The four tables of one taxonomy, plus free-form ``info`` (source versions, stats).

    Attributes
    ----------
    name : str
        The name.
    nodes : polars.DataFrame
        The nodes table.
    names : polars.DataFrame
        The names table.
    links : polars.DataFrame
        The links table.
    report : polars.DataFrame
        The report table.
    info : dict
        Provenance and metadata.
    folder : Path or None
        The folder.
    """

    name: str
    nodes: pl.DataFrame
    names: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=NAMES_SCHEMA))
    links: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=LINKS_SCHEMA))
    report: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=REPORT_SCHEMA))
    info: dict = field(default_factory=dict)
    #: the folder the tables were read from (:meth:`read`, a snapshot folder), if any: where
    #: derived data such as the mapping index may be kept beside them; never compared
    folder: Path | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.nodes = conform(self.nodes, "nodes")
        self.names = conform(self.names, "names")
        self.links = conform(self.links, "links")
        self.report = conform(self.report, "report")

    def __getattr__(self, attr: str):
        unread = self.__dict__.get("_unread")
        if unread is not None and attr in unread:  # a table of a lazy read: read it now
            p = unread.pop(attr)
            df = conform(pl.read_parquet(p) if p.exists() else None, attr)
            setattr(self, attr, df)
            return df
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def tables(self) -> dict[str, pl.DataFrame]:
        """The four tables by name.

        Returns
        -------
        dict
            ``nodes``, ``names``, ``links``, ``report`` → the table.
        """
        return {"nodes": self.nodes, "names": self.names, "links": self.links, "report": self.report}

    def write(self, folder: str | os.PathLike, *, info: bool = True) -> dict[str, Path]:
        """Write ``<folder>/{nodes,names,links,report}.parquet`` and (unless ``info`` is
        false) ``info.json``, each atomically (temporary file, then a rename). Returns the
        table paths.

        Parameters
        ----------
        folder : str or os.PathLike
            The folder.
        info : bool, optional
            Provenance and metadata.

        Returns
        -------
        dict[str, Path]
            Table name → the file written.
        """
        folder = Path(folder)
        paths = {t: write_parquet_atomic(df, folder / f"{t}.parquet") for t, df in self.tables().items()}
        if info:
            write_bytes_atomic(folder / INFO_NAME, info_json_bytes(self.info))
        return paths

    def as_read(self, folder: str | os.PathLike, name: str | None = None) -> "TreeTables":
        """What :meth:`read` gives for ``folder`` when it holds these very tables (written by
        :meth:`write`, unchanged since: the caller's to know), without reading and sorting them
        again: the four tables shared (polars frames are immutable, and these are conformed),
        ``info.json`` read.

        Parameters
        ----------
        folder : str or os.PathLike
            The folder the tables were written to.
        name : str, optional
            The name (default the folder's).

        Returns
        -------
        TreeTables
        """
        folder = Path(folder)
        if self.__dict__.get("_unread"):
            return type(self).read(folder, name)
        same = copy.copy(self)  # no __post_init__: the tables are conformed already
        same.name, same.info, same.folder = name or folder.name, read_info(folder), folder
        return same

    @classmethod
    def read(cls, folder: str | os.PathLike, name: str | None = None, *, lazy: bool = False) -> "TreeTables":
        """Read the tables and ``info.json`` written by :meth:`write`. A missing
        ``nodes.parquet`` is an error naming the folder; the other tables and
        ``info.json`` are optional (a folder without it has an empty ``info``).

        Parameters
        ----------
        folder : str or os.PathLike
            The folder.
        name : str, optional
            The name.
        lazy : bool
            Read ``info.json`` only: each table is read when it is first used (a caller
            that already knows what it needs of the tree — e.g. a scoring run whose tree is
            stored ready to use — reads no table it does not touch).

        Returns
        -------
        TreeTables
        """
        folder = Path(folder)
        if not (folder / "nodes.parquet").exists():
            raise FileNotFoundError(f"{folder}: no nodes.parquet — not a taxonomy folder")
        if lazy:
            t = cls.__new__(cls)
            t.name, t.info, t.folder = name or folder.name, read_info(folder), folder
            t.__dict__["_unread"] = {tb: folder / f"{tb}.parquet" for tb in TABLE_SCHEMAS}
            return t
        parts = {}
        for t in TABLE_SCHEMAS:
            p = folder / f"{t}.parquet"
            parts[t] = pl.read_parquet(p) if p.exists() else None
        return cls(name=name or folder.name, **parts, info=read_info(folder), folder=folder)

    @classmethod
    def from_build(
        cls,
        name: str,
        build,
        names: pl.DataFrame | None = None,
        *,
        labels: pl.DataFrame | None = None,
        ranks: pl.DataFrame | None = None,
        links: pl.DataFrame | None = None,
        report: pl.DataFrame | None = None,
        root_label: str = "root",
        info: dict | None = None,
    ) -> "TreeTables":
        """Tables of a tree made by :func:`taxoforge.trees.build.build_tree`; every source
        ends here.

        Parameters
        ----------
        name : str
            Name of the taxonomy.
        build : TreeBuild
            The built tree (its ``nodes``, ``report``, ``stats`` and ``root_id``).
        names : polars.DataFrame, optional
            The names table; names of nodes not in the tree are dropped.
        labels : polars.DataFrame, optional
            ``node_id``, ``label``: each node's label (one row per node, e.g. a ranked
            source's taxa). Without it, a node's label is its first name of kind
            ``label``, else its first name. A node with neither gets its id, the root
            ``root_label``.
        ranks : polars.DataFrame, optional
            ``node_id``, ``rank`` (one row per node) fills ``rank``.
        links : polars.DataFrame, optional
            The links table.
        report : polars.DataFrame, optional
            The source's own report rows (any subset of the report columns), appended to
            the build's.
        root_label : str
            Label of a root that has none (the synthetic root).
        info : dict, optional
            Free-form info; gets the build's stats under ``"build"``, ``"root_id"``, and
            (unless given) the build's tie ``"seed"`` and ``"cycle_policy"``.

        Returns
        -------
        TreeTables

        Examples
        --------
        >>> from taxoforge.trees.build import build_tree
        >>> b = build_tree(pl.DataFrame({"child": ["a", "b"], "parent": ["r", "r"]}), source="x")
        >>> t = TreeTables.from_build("toy", b, labels=pl.DataFrame({"node_id": ["a"], "label": ["Alpha"]}))
        >>> t.nodes.select("node_id", "label", "is_leaf").rows()
        [('a', 'Alpha', True), ('b', 'b', True), ('r', 'root', False)]
        """
        nodes = build.nodes.select("node_id", "parent_id", "depth")
        keep = nodes.select("node_id")
        if names is not None and names.height:
            names = names.join(keep, on="node_id", how="semi")
        if labels is not None:
            nodes = nodes.join(labels.select("node_id", pl.col("label").cast(pl.String)), on="node_id", how="left",
                               maintain_order="left")
        elif names is not None and names.height:
            ordered = names.with_columns((pl.col("kind") != "label").alias("_nl")).sort(
                "node_id", "_nl", maintain_order=True
            )
            first_names = ordered.group_by("node_id", maintain_order=True).agg(pl.col("name").first().alias("label"))
            nodes = nodes.join(first_names, on="node_id", how="left", maintain_order="left")
        else:
            nodes = nodes.with_columns(pl.lit(None, dtype=pl.String).alias("label"))
        nodes = nodes.with_columns(
            pl.when(pl.col("node_id") == f"{build.root_id}").then(pl.coalesce("label", pl.lit(root_label)))
            .otherwise(pl.coalesce("label", "node_id")).alias("label")
        )
        if ranks is not None:
            nodes = nodes.join(ranks.select("node_id", pl.col("rank").cast(pl.String)), on="node_id", how="left",
                               maintain_order="left")
        nodes = with_is_leaf(nodes)
        reports = build.report
        if report is not None and report.height:
            reports = pl.concat([reports, conform(report, "report")])
        meta = dict(info or {})
        meta.setdefault("build", dict(build.stats))
        meta.setdefault("root_id", build.root_id)
        meta.setdefault("seed", build.tie_seed)
        meta.setdefault("cycle_policy", build.cycle_policy)
        return cls(name=name, nodes=nodes, names=names, links=links, report=reports, info=meta)


def name_kind_counts(tree: "TreeTables | pl.DataFrame", *, by_lang: bool = False) -> pl.DataFrame:
    """Which kinds of names a tree has, and how many: one row per ``kind`` (per ``kind`` and
    ``lang`` with ``by_lang``) with ``names`` (rows), ``nodes`` (distinct nodes having such a
    name) and, per kind, ``langs`` (distinct languages, null counted as one). Sorted by kind
    (then lang). A tree without names gives an empty table with these columns.

    >>> t = TreeTables("t", pl.DataFrame({"node_id": ["a", "b"], "parent_id": [None, "a"]}),
    ...                names=pl.DataFrame({"node_id": ["a", "b", "b", "b"], "name": ["A", "B", "bee", "Biene"],
    ...                                    "kind": ["scientific", "scientific", "vernacular", "vernacular"],
    ...                                    "lang": ["la", "la", "en", "de"]}))
    >>> name_kind_counts(t).rows()
    [('scientific', 2, 2, 1), ('vernacular', 2, 1, 2)]
    >>> name_kind_counts(t, by_lang=True).rows()[1:]
    [('vernacular', 'de', 1, 1), ('vernacular', 'en', 1, 1)]

    Parameters
    ----------
    tree : 'TreeTables or polars.DataFrame'
        The tree.
    by_lang : bool, optional
        Whether counts are per kind and language.

    Returns
    -------
    polars.DataFrame
        Which kinds of names a tree has, and how many: one row per ``kind`` (per
        ``kind`` and ``lang`` with ``by_lang``) with ``names`` (rows), ``nodes``
        (distinct nodes having such a name) and, per kind, ``langs`` (distinct
        languages, null counted as one).
    """
    names = tree.names if isinstance(tree, TreeTables) else tree
    keys = ["kind", "lang"] if by_lang else ["kind"]
    aggs = [pl.len().cast(pl.Int64).alias("names"), pl.col("node_id").n_unique().cast(pl.Int64).alias("nodes")]
    if not by_lang:
        aggs.append(pl.col("lang").n_unique().cast(pl.Int64).alias("langs"))
    out = names.group_by(keys).agg(aggs).sort(keys, nulls_last=True)
    return out
