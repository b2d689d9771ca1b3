"""Tree integrity facts: roots, orphans, cycles, depths and link coverage."""

import numpy as np
import polars as pl
import pytest

from taxoforge.trees.integrity import coverage_failures, link_coverage, named_examples, root_children, tree_integrity


def nodes(pairs, depth=None):
    df = pl.DataFrame({"node_id": [c for c, _ in pairs], "parent_id": [p for _, p in pairs]},
                      schema={"node_id": pl.String, "parent_id": pl.String})
    if depth is not None:
        df = df.with_columns(pl.Series("depth", depth, dtype=pl.Int32))
    return df


def test_clean_tree_passes_everything():
    t = tree_integrity(nodes([("r", None), ("a", "r"), ("b", "r"), ("a1", "a")], depth=[0, 1, 1, 2]))
    assert (t.one_root, t.acyclic, t.no_orphans, t.depths_consistent) == (True, True, True, True)
    assert t.roots == ["r"] and t.max_depth == 2 and t.n_depth_mismatches == 0


def test_two_roots_and_duplicates_fail_one_root():
    t = tree_integrity(nodes([("r", None), ("s", None), ("a", "r"), ("a", "s")]))
    assert not t.one_root
    assert t.n_roots == 2 and t.roots == ["r", "s"]
    assert t.duplicate_ids == ["a"]


def test_orphans_are_counted_with_their_descendants():
    t = tree_integrity(nodes([("r", None), ("c", "gone"), ("c1", "c"), ("c2", "c1")]))
    assert t.orphans == ["c"] and t.n_orphans == 1 and t.n_below_orphans == 2
    assert t.acyclic  # hanging below an orphan is not a cycle


def test_cycle_and_nodes_below_it_are_found_and_traced():
    t = tree_integrity(nodes([("r", None), ("x", "z"), ("y", "x"), ("z", "y"), ("below", "x")]))
    assert not t.acyclic
    assert t.n_on_cycles == 4  # x, y, z and "below"
    assert t.cycle_example == ["x", "z", "y"]  # child → parent order, smallest id first
    assert t.n_depth_mismatches is None  # depth is meaningless on a cycle


def test_self_loop_is_a_cycle():
    t = tree_integrity(nodes([("r", None), ("s", "s")]))
    assert t.n_on_cycles == 1 and t.cycle_example == ["s"]


def test_depth_mismatch():
    t = tree_integrity(nodes([("r", None), ("a", "r"), ("b", "a")], depth=[0, 1, 1]))
    assert not t.depths_consistent and t.depth_mismatch_examples == ["b"]


def test_long_chain_is_vectorised_and_correct():
    n = 200_000
    ids = [f"n{i}" for i in range(n)]
    df = pl.DataFrame({"node_id": ids, "parent_id": [None] + ids[:-1], "depth": np.arange(n, dtype=np.int32)})
    t = tree_integrity(df)
    assert t.one_root and t.acyclic and t.depths_consistent and t.max_depth == n - 1
    # Closing the chain into a ring leaves no root and every node on the cycle.
    ring = df.with_columns(pl.when(pl.col("node_id") == "n0").then(pl.lit(ids[-1])).otherwise(pl.col("parent_id")).alias("parent_id"))
    t = tree_integrity(ring)
    assert t.n_roots == 0 and t.n_on_cycles == n


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="parent_id"):
        tree_integrity(pl.DataFrame({"node_id": ["a"]}))


def test_link_coverage_per_dataset_and_dangling_links():
    links = pl.DataFrame({
        "dataset": ["d1", "d1", "d1", "d1", "d2", "d2"],
        "status": ["linked", "linked", "ambiguous", "unmatched", "linked", "linked"],
        "node_id": ["a", "b", None, None, "a", "ghost"],
    })
    cov = link_coverage(links, ["r", "a", "b"])
    rows = {r["dataset"]: r for r in cov.iter_rows(named=True)}
    assert rows["d1"]["coverage"] == pytest.approx(0.5)
    assert (rows["d1"]["n_ambiguous"], rows["d1"]["n_unmatched"], rows["d1"]["n_dangling"]) == (1, 1, 0)
    assert rows["d2"]["coverage"] == 1.0 and rows["d2"]["n_dangling"] == 1
    reasons = coverage_failures(cov, 0.9)
    assert any(r.startswith("d1: 2/4") for r in reasons)
    assert any("d2: 1 link(s) point to node ids not in the tree" in r for r in reasons)
    # Per-dataset thresholds: ungated datasets only fail on dangling links.
    assert coverage_failures(cov, {"d1": 0.5}) == ["d2: 1 link(s) point to node ids not in the tree"]


def test_link_coverage_of_no_links_is_empty():
    assert link_coverage(pl.DataFrame()).height == 0


def _ranked(rows):
    return pl.DataFrame(rows, schema={"node_id": pl.String, "parent_id": pl.String, "label": pl.String,
                                      "rank": pl.String}, orient="row")


def test_only_the_top_rank_sits_under_the_root_and_offenders_are_named():
    nodes = _ranked([("life", None, "Life", "stateofmatter"), ("a", "life", "Animalia", "kingdom"),
                     ("p", "life", "Plantae", "kingdom"), ("g", "a", "Balhochordaes", "genus"),
                     ("x", "life", "Balhochordaes charon", "species"),
                     ("y", "life", "Aphis clerodendri clerodendri", "subspecies"),
                     ("t:incertae_sedis", "life", "Incertae sedis", None)])
    got = root_children(nodes)
    assert got.root == "life" and got.n_children == 5 and got.top_rank == "kingdom" and not got.ok
    # the deepest first, each with its name, id and rank; the unranked incertae sedis node passes
    assert got.misplaced == ["Balhochordaes charon (x, species)", "Aphis clerodendri clerodendri (y, subspecies)"]
    placed = nodes.with_columns(pl.when(pl.col("node_id").is_in(["x", "y"])).then(pl.lit("g"))
                                .otherwise(pl.col("parent_id")).alias("parent_id"))
    assert root_children(placed).ok


def test_the_top_rank_is_the_trees_own():
    """A tree of one superfamily has its families under the root: that is its top rank."""
    nodes = _ranked([("r", None, "Pterophoroidea", "superfamily"), ("f1", "r", "Pterophoridae", "family"),
                     ("f2", "r", "Macropiratidae", "family"), ("s", "r", "Stray stray", "species")])
    got = root_children(nodes)
    assert got.top_rank == "family" and got.misplaced == ["Stray stray (s, species)"]
    unranked = pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"], "label": ["x", "y"]})
    assert root_children(unranked).ok and root_children(unranked).top_rank is None


def test_named_examples_carry_the_parent():
    nodes = _ranked([("r", None, "Life", None), ("f", "r", "Tortricidae", "family"),
                     ("s", "f", "Dichelia sobriana", "species")])
    assert named_examples(nodes, ["s", "gone"], with_parent=True) == [
        "Dichelia sobriana (s, species) under Tortricidae (family)", "gone under None"]
