"""Trees from the real publication-type and art-object graphs: rooted trees, longest root paths,
cycle report and tie decisions, each checked against an independent networkx computation."""

from __future__ import annotations

import math

import networkx as nx
import polars as pl
import pytest

from taxoforge.sources.wikidata.exclusions import exclusion_node_ids
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.tree import build_wikidata_tree


def graph_of(edges: pl.DataFrame, extra: list[tuple[str, str]] = ()) -> WikidataGraph:
    rows = edges.rows() + list(extra)
    e = pl.DataFrame({"child": [f"wd:{c}" for c, _ in rows], "parent": [f"wd:{p}" for _, p in rows],
                      "relation": ["P279"] * len(rows)})
    return WikidataGraph(edges=e, names=pl.DataFrame(schema={"node_id": pl.String, "name": pl.String,
                                                             "kind": pl.String, "lang": pl.String}))


def dag_of(graph: WikidataGraph, drop_edges: set = frozenset(), drop_nodes: set = frozenset()) -> nx.DiGraph:
    """parent → child DAG with a synthetic root over the graph's roots, as the builder defines it."""
    g = nx.DiGraph()
    for c, p, _ in graph.edges.iter_rows():
        if (c, p) in drop_edges or c in drop_nodes or p in drop_nodes:
            g.add_nodes_from([x for x in (c, p) if x not in drop_nodes])
            continue
        g.add_edge(p, c)
    roots = [n for n in g if g.in_degree(n) == 0]
    if len(roots) > 1:
        g.add_edges_from(("wd:root", r) for r in roots)
    return g


def longest_and_counts(dag: nx.DiGraph) -> tuple[dict, dict]:
    """Longest root path length and exact number of longest root paths of every node."""
    depth, count = {}, {}
    for v in nx.topological_sort(dag):
        ps = list(dag.predecessors(v))
        if not ps:
            depth[v], count[v] = 0, 1
            continue
        d = max(depth[p] for p in ps) + 1
        depth[v] = d
        count[v] = sum(count[p] for p in ps if depth[p] == d - 1)
    return depth, count


def assert_tree_matches_dag(tree, dag: nx.DiGraph) -> None:
    nodes = tree.nodes
    roots = nodes.filter(pl.col("parent_id").is_null())["node_id"].to_list()
    assert len(roots) == 1
    t = nx.DiGraph(nodes.drop_nulls("parent_id").select("parent_id", "node_id").rows())
    t.add_nodes_from(nodes["node_id"])
    assert nx.is_arborescence(t)
    assert set(nodes["node_id"]) == set(dag.nodes)
    depth, count = longest_and_counts(dag)
    assert dict(zip(nodes["node_id"], nodes["depth"])) == depth
    for c, p in nodes.drop_nulls("parent_id").select("node_id", "parent_id").rows():
        assert dag.has_edge(p, c), "a tree edge that is not in the graph"
        assert depth[p] == depth[c] - 1, "a parent off the longest root path"
    # tie decisions: exactly the nodes with several tight parents, weights ∝ path counts
    ties = tree.report.filter(pl.col("kind") == "tie")
    parent = dict(zip(nodes["node_id"], nodes["parent_id"]))
    want_ties = {}
    for v in dag:
        tight = sorted(p for p in dag.predecessors(v) if depth[p] == depth[v] - 1)
        if len(tight) > 1:
            want_ties[v] = tight
    assert sorted(ties["child_id"]) == sorted(want_ties)
    for row in ties.iter_rows(named=True):
        v = row["child_id"]
        assert row["candidates"] == want_ties[v]
        assert row["chosen"] == parent[v] and row["chosen"] in row["candidates"]
        total = sum(count[p] for p in want_ties[v])
        for p, w in zip(row["candidates"], row["weights"]):
            assert math.isclose(w, count[p] / total, rel_tol=1e-9)
    # every graph edge that is not on a longest path is reported as such
    not_longest = set(tree.report.filter(pl.col("kind") == "not_longest").select("child_id", "parent_id").rows())
    assert not_longest == {(c, p) for p, c in dag.edges if depth[p] != depth[c] - 1}


@pytest.fixture(params=["art", "pub"])
def real_graph(request, art_edges, pub_edges) -> WikidataGraph:
    return graph_of(art_edges if request.param == "art" else pub_edges)


def test_real_graphs_give_rooted_trees(real_graph):
    tree = build_wikidata_tree(real_graph, exclude={}, tie_seed=0)
    dag = dag_of(real_graph)
    assert_tree_matches_dag(tree, dag)
    # cycle report: the real graphs are acyclic, and the builder says so
    n_scc = sum(1 for s in nx.strongly_connected_components(dag) if len(s) > 1)
    assert n_scc == 0 and tree.info["build"]["nontrivial_sccs"] == 0
    assert tree.report.filter(pl.col("kind").is_in(["cycle_back_edge", "abstract_on_cycle"])).height == 0
    # several roots: all under the synthetic root, each reported
    roots = {n for n in dag.successors("wd:root")} if "wd:root" in dag else set()
    assert set(tree.report.filter(pl.col("kind") == "synthetic_root")["child_id"]) == roots
    assert tree.info["build"]["ties"] == tree.report.filter(pl.col("kind") == "tie").height > 10


def test_same_seed_same_tree_other_seed_other_choices(real_graph):
    a = build_wikidata_tree(real_graph, tie_seed=1)
    b = build_wikidata_tree(real_graph, tie_seed=1)
    assert a.nodes.equals(b.nodes) and a.report.equals(b.report)
    others = [build_wikidata_tree(real_graph, tie_seed=s) for s in range(2, 7)]
    ties = a.report.filter(pl.col("kind") == "tie")
    assert any(not o.report.filter(pl.col("kind") == "tie")["chosen"].equals(ties["chosen"]) for o in others)
    for o in others:
        assert o.nodes.select("node_id", "depth").equals(a.nodes.select("node_id", "depth"))


@pytest.mark.parametrize("policy", ["dfs_back_edges", "drop_abstract"])
def test_cycles_are_broken_and_reported(art_edges, policy):
    """Close real cycles: "work of art" (Q838948) made a subclass of painting (Q3305213), and
    "artificial physical object" (Q8205328) of bell (Q101401)."""
    extra = [("Q838948", "Q3305213"), ("Q8205328", "Q101401")]
    graph = graph_of(art_edges, extra)
    full = dag_of(graph)
    sccs = [s for s in nx.strongly_connected_components(full) if len(s) > 1]
    assert sccs, "the added edges must close cycles"
    tree = build_wikidata_tree(graph, exclude={}, cycle_policy=policy)
    st = tree.info["build"]
    assert st["nontrivial_sccs"] == len(sccs)
    assert st["nodes_on_cycles"] == sum(len(s) for s in sccs)
    kind = "cycle_back_edge" if policy == "dfs_back_edges" else "abstract_on_cycle"
    removed = set(tree.report.filter(pl.col("kind") == kind).select("child_id", "parent_id").rows())
    assert removed and st["cycle_edges_removed"] == len(removed)
    in_cycle = set().union(*sccs)
    if policy == "dfs_back_edges":
        assert all(c in in_cycle and p in in_cycle for c, p in removed)
        dag = dag_of(graph, drop_edges=removed)
    else:
        gone = set(full.nodes) - set(tree.nodes["node_id"]) - {"wd:root"}
        assert gone <= in_cycle and len(gone) == st["abstract_nodes_dropped"] >= 1
        assert removed == {(c, p) for c, p, _ in graph.edges.iter_rows() if c in gone or p in gone}
        dag = dag_of(graph, drop_nodes=gone)
    assert nx.is_directed_acyclic_graph(dag)
    assert_tree_matches_dag(tree, dag)


def test_exclusion_list_removes_nodes_and_reports_edges(pub_edges):
    graph = graph_of(pub_edges)
    victim = "wd:Q732577"  # publication: the top concept of the graph
    edges_of = {(c, p) for c, p, _ in graph.edges.iter_rows() if victim in (c, p)}
    tree = build_wikidata_tree(graph, exclude={victim: "test"})
    assert victim not in set(tree.nodes["node_id"])
    rep = set(tree.report.filter(pl.col("kind") == "excluded_node").select("child_id", "parent_id").rows())
    assert rep == edges_of
    assert tree.info["wikidata"]["excluded_in_graph"] == [victim]
    assert_tree_matches_dag(tree, dag_of(graph, drop_nodes={victim}))


def test_default_exclusions_on_the_real_publication_graph(pub_edges):
    """The real publication-type graph holds Wikimedia list/article-page classes of the default list."""
    excl = exclusion_node_ids()
    graph = graph_of(pub_edges)
    present = sorted(set(excl) & (set(graph.edges["child"]) | set(graph.edges["parent"])))
    assert present, "expected default-excluded classes in the publication graph"
    tree = build_wikidata_tree(graph, exclude=excl)
    assert tree.info["wikidata"]["excluded_in_graph"] == present
    assert not set(present) & set(tree.nodes["node_id"])
    assert_tree_matches_dag(tree, dag_of(graph, drop_nodes=set(present)))


def test_labels_and_leaf_flags(wikidata_dir):
    from taxoforge.sources.wikidata.dump import read_dump

    g = read_dump(wikidata_dir / "vandycite_art_object_classes_P279_superclasses.ttl")
    tree = build_wikidata_tree(g)
    lab = dict(zip(tree.nodes["node_id"], tree.nodes["label"]))
    assert lab["wd:Q3305213"] == "painting" and lab["wd:root"] == "root"
    has_child = set(tree.nodes["parent_id"].drop_nulls())
    assert dict(zip(tree.nodes["node_id"], tree.nodes["is_leaf"])) == {n: n not in has_child for n in lab}
    assert tree.names.filter(pl.col("kind") == "label").height == g.names.height
