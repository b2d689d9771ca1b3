"""The extracted Wikidata graph: edges and names, before it becomes a tree.

Both extraction routes — SPARQL from seed entities (:mod:`.extract`) and a local dump
(:mod:`.dump`) — produce a :class:`WikidataGraph`, and :func:`.tree.build_wikidata_tree`
turns either into the four tree tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

__all__ = ["WikidataGraph", "EDGES_SCHEMA", "GRAPH_NAMES_SCHEMA", "DROPPED_SCHEMA"]

EDGES_SCHEMA = {"child": pl.String, "parent": pl.String, "relation": pl.String}
GRAPH_NAMES_SCHEMA = {"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String}
DROPPED_SCHEMA = {"kind": pl.String, "child_id": pl.String, "parent_id": pl.String, "detail": pl.String}


@dataclass
class WikidataGraph:
    """``edges``: ``child``, ``parent`` (``wd:Q…`` node ids), ``relation`` (``P31`` for an
    entity under its class, ``P279`` for a subclass under its superclass).
    ``names``: ``node_id``, ``name``, ``kind`` (``label`` | ``alias``), ``lang``.
    ``seed_node_ids``: the node ids of the seed entities, in numeric QID order (stored as the
    ``seeds`` table). ``info``: provenance
    (endpoint, query time, file, counts). ``dropped``: the edges read but not kept, with a
    reason; the dump route fills it (:mod:`.dump_graph`), and the tree's report gets it.

    Attributes
    ----------
    edges : polars.DataFrame
        ``child``, ``parent`` (``wd:Q…``), ``relation`` (``P31`` or ``P279``).
    names : polars.DataFrame
        ``node_id``, ``name``, ``kind``, ``lang``.
    seed_node_ids : list[str]
        The node ids of the entities the graph was extracted for.
    info : dict
        Provenance (method, endpoint or file, times).
    dropped : polars.DataFrame
        ``kind``, ``child_id``, ``parent_id``, ``detail``: edges read and not kept.
    identifiers : polars.DataFrame or None
        The identifier claims of the graph's items
        (:data:`taxoforge.sources.wikidata.identifiers.CLAIMS_SCHEMA`), when they were read
        (the dump route with ``identifiers=True``); stored as the ``identifiers`` table.
    """

    edges: pl.DataFrame
    names: pl.DataFrame
    seed_node_ids: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    dropped: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=DROPPED_SCHEMA))
    identifiers: pl.DataFrame | None = None

    def __post_init__(self) -> None:
        self.edges = (
            self.edges.select([pl.col(c).cast(t) for c, t in EDGES_SCHEMA.items()])
            .unique()
            .sort("child", "parent", "relation")
        )
        self.names = (
            self.names.select([pl.col(c).cast(t) for c, t in GRAPH_NAMES_SCHEMA.items()])
            .unique()
            .sort("node_id", "kind", "name", "lang")
        )
        self.dropped = self.dropped.select([pl.col(c).cast(t) for c, t in DROPPED_SCHEMA.items()])

    @classmethod
    def from_normalised(cls, edges: pl.DataFrame, names: pl.DataFrame, seed_node_ids: list[str] | None = None,
                        info: dict | None = None) -> "WikidataGraph":
        """A graph from tables already in the form ``__post_init__`` gives them (these columns and
        types, no repeated rows, sorted), kept as they are: for a reader that builds them sorted
        (the dump reader, where sorting millions of id strings again would cost seconds).

        Parameters
        ----------
        edges : polars.DataFrame
            The edge table (``child``, ``parent``).
        names : polars.DataFrame
            The names table.
        seed_node_ids : list[str], optional
            The node ids of the seed entities.
        info : dict, optional
            Provenance.
        """
        graph = cls.__new__(cls)
        graph.edges, graph.names = edges.select(list(EDGES_SCHEMA)), names.select(list(GRAPH_NAMES_SCHEMA))
        graph.seed_node_ids, graph.info = list(seed_node_ids or []), dict(info or {})
        graph.dropped = pl.DataFrame(schema=DROPPED_SCHEMA)
        graph.identifiers = None
        return graph

    def tables(self) -> dict[str, pl.DataFrame]:
        """The graph as a dict of tables (for Parquet storage).

        Returns
        -------
        dict[str, polars.DataFrame]
            ``edges``, ``names``, ``seeds``, ``dropped``, and ``identifiers`` when read.
        """
        out = {
            "edges": self.edges,
            "names": self.names,
            "seeds": pl.DataFrame({"node_id": pl.Series(self.seed_node_ids, dtype=pl.String)}),
            "dropped": self.dropped,
        }
        if self.identifiers is not None:
            out["identifiers"] = self.identifiers
        return out

    @classmethod
    def from_tables(cls, tables: dict[str, pl.DataFrame], info: dict | None = None) -> "WikidataGraph":
        """A graph from tables stored by an asset (``edges``, ``names``, optional ``seeds``, ``dropped``,
        ``identifiers``).

        Parameters
        ----------
        tables : dict
            Table name → polars DataFrame.
        info : dict, optional
            Provenance.

        Returns
        -------
        WikidataGraph
            The graph.
        """
        seed_node_ids = tables["seeds"]["node_id"].to_list() if "seeds" in tables else []
        dropped = tables["dropped"] if "dropped" in tables else pl.DataFrame(schema=DROPPED_SCHEMA)
        return cls(edges=tables["edges"], names=tables["names"], seed_node_ids=seed_node_ids, info=dict(info or {}),
                   dropped=dropped, identifiers=tables.get("identifiers"))
