"""The blocking tree checks gate downstream assets in the same run."""

import dagster as dg
import polars as pl
import pytest

from assets.common.checks import TREE_CHECK_NAMES, tree_checks
from assets.common.io_manager import ParquetIOManager
from taxoforge.trees.tables import TreeTables


def _tree(parents: dict, links: pl.DataFrame | None = None) -> TreeTables:
    ids = list(parents)
    depth = {}
    for n in ids:  # depth by walking up (test trees are tiny and acyclic unless stated)
        d, p, seen = 0, parents[n], set()
        while p is not None and p in parents and p not in seen:
            seen.add(p)
            d, p = d + 1, parents[p]
        depth[n] = d
    nodes = pl.DataFrame({"node_id": ids, "parent_id": [parents[n] for n in ids], "depth": [depth[n] for n in ids]})
    return TreeTables("t", nodes, links=links)


def _run(tmp_path, tree: TreeTables, **kw):
    @dg.asset(group_name="test")
    def tree_asset():
        return tree

    @dg.asset(group_name="test")
    def published(tree_asset):
        return pl.DataFrame({"n": [tree_asset.nodes.height]})

    defs = dg.Definitions(
        assets=[tree_asset, published],
        asset_checks=tree_checks(tree_asset, **kw),
        jobs=[dg.define_asset_job("build_and_publish", selection=dg.AssetSelection.all())],
        resources={"io_manager": ParquetIOManager(data_dir=str(tmp_path))},
    )
    result = defs.resolve_job_def("build_and_publish").execute_in_process(
        raise_on_error=False, instance=dg.DagsterInstance.ephemeral())
    evals = {e.check_name: e for e in result.get_asset_check_evaluations()}
    return result, evals, tmp_path / "assets" / "published" / "table.parquet"


LINKS = pl.DataFrame({"dataset": ["ds"] * 4, "label_id": ["1", "2", "3", "4"],
                      "status": ["linked", "linked", "linked", "unmatched"], "node_id": ["a", "b", "a", None]})


def test_a_clean_tree_is_published(tmp_path):
    result, evals, published = _run(tmp_path, _tree({"r": None, "a": "r", "b": "r"}, LINKS), min_link_coverage=0.7)
    assert result.success
    assert set(evals) == set(TREE_CHECK_NAMES) and all(e.passed for e in evals.values())
    assert evals["tree_link_coverage"].metadata["coverage"].value == pytest.approx(0.75)
    assert published.exists()


@pytest.mark.parametrize("parents,failing", [
    ({"r": None, "s": None, "a": "r"}, "tree_one_root"),
    ({"r": None, "a": "r", "b": "missing"}, "tree_no_orphans"),
    ({"r": None, "a": "b", "b": "a"}, "tree_acyclic"),
])
def test_a_broken_tree_blocks_publishing(tmp_path, parents, failing):
    result, evals, published = _run(tmp_path, _tree(parents))
    assert not evals[failing].passed
    assert not result.success
    assert not published.exists(), "a blocking check failed but the downstream asset was materialised"
    assert "published" not in {e.step_key for e in result.get_step_success_events()}


def test_low_link_coverage_blocks_publishing(tmp_path):
    result, evals, published = _run(tmp_path, _tree({"r": None, "a": "r", "b": "r"}, LINKS), min_link_coverage=0.9)
    cov = evals["tree_link_coverage"]
    assert not cov.passed and "3/4" in cov.metadata["failures"].value
    assert all(evals[n].passed for n in TREE_CHECK_NAMES if n != "tree_link_coverage")
    assert not published.exists()


def test_non_blocking_checks_report_but_let_publishing_go_on(tmp_path):
    result, evals, published = _run(tmp_path, _tree({"r": None, "s": None}), blocking=False,
                                       severity=dg.AssetCheckSeverity.WARN)
    assert not evals["tree_one_root"].passed
    assert published.exists()


def test_require_links(tmp_path):
    _, evals, _ = _run(tmp_path, _tree({"r": None, "a": "r"}), require_links=True)
    assert not evals["tree_link_coverage"].passed


def test_factory_validates_its_arguments():
    with pytest.raises(ValueError, match="unknown tree check"):
        tree_checks("x", checks=["tree_one_root", "tree_is_pretty"])
    with pytest.raises(ValueError, match="min_link_coverage"):
        tree_checks("x", min_link_coverage=95)
    (defn,) = tree_checks(["ns", "some_tree"], checks=["tree_one_root"])
    assert {k.name for k in defn.check_keys} == {"tree_one_root"}
    assert all(spec.blocking for spec in defn.check_specs)
