"""The gate before publishing: a tree that fails any of these checks is not published.

The structural facts come from :mod:`taxoforge.trees.integrity` (the same functions the
blocking Dagster checks of :mod:`pipelines.checks` use), so the CLI, the library and the
pipeline refuse the same trees. Checks, in order:

``nodes_present``     at least one node.
``one_root``          exactly one root, no null or duplicate node ids.
``acyclic``           no node lies on, or hangs below, a parent cycle.
``no_orphans``        every ``parent_id`` is a node of the tree.
``depths_consistent`` depth 0 at the root and parent depth + 1 everywhere else.
``top_ranks_under_root`` only the top Linnean rank of the tree (kingdoms, in a tree of all
                      life) under the root, besides unranked nodes such as
                      ``<source>:incertae_sedis``: a species beside the kingdoms is named
                      (:func:`taxoforge.trees.integrity.root_children`).
``names_known``       every name belongs to a node of the tree.
``links_known``       no linked label points outside the tree.
``link_coverage``     only with ``min_link_coverage``: the share of each dataset's labels
                      that are linked is at least that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass


from taxoforge.snapshots.manifest import SnapshotError
from taxoforge.trees.integrity import root_children, tree_integrity
from taxoforge.trees.integrity import coverage_failures, link_coverage
from taxoforge.markdown import markdown_table
from taxoforge.trees.tables import TreeTables

__all__ = ["TreeCheck", "publishing_checks", "failed_checks"]


@dataclass(frozen=True)
class TreeCheck:
    """The result of one publishing check.

    Attributes
    ----------
    name : str
        The check (``one_root``, ``acyclic``, ``link_coverage`` …).
    passed : bool
        Whether the tree passed it.
    detail : str
        What was found, in words.
    count : int
        Offending rows (0 when passed).
    """

    name: str
    passed: bool
    detail: str
    count: int = 0  # offending rows (0 when passed)

    def as_dict(self) -> dict:
        """The check as a plain dict (``name``, ``passed``, ``detail``, ``count``).

        Returns
        -------
        dict
            One entry per field.
        """
        return asdict(self)


def _ex(values) -> str:
    return ", ".join(str(v) for v in list(values)[:5])


def publishing_checks(tables: TreeTables, *, min_link_coverage: float | Mapping[str, float] | None = None) -> list[TreeCheck]:
    """Run every check on ``tables``; one :class:`TreeCheck` per check, in order.

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.
    min_link_coverage : float or Mapping[str, float], optional
        Least share of each dataset's labels that must link (one for all, or per
        dataset); None skips the gate.

    Returns
    -------
    list[TreeCheck]
        One result per check, in order.
    """
    t = tree_integrity(tables.nodes)
    out = [TreeCheck("nodes_present", t.n_nodes > 0, f"{t.n_nodes} nodes" if t.n_nodes else "no nodes",
                     0 if t.n_nodes else 1)]
    if t.n_nodes:
        out.append(TreeCheck(
            "one_root", t.one_root,
            f"root {t.roots[0]}" if t.one_root else
            f"{t.n_roots} root(s) (e.g. {_ex(t.roots)}), {t.n_duplicate_ids} duplicated id(s) "
            f"(e.g. {_ex(t.duplicate_ids)}), {t.n_null_ids} null id(s)",
            0 if t.one_root else max(1, abs(t.n_roots - 1) + t.n_duplicate_ids + t.n_null_ids)))
        out.append(TreeCheck(
            "acyclic", t.acyclic,
            "no cycle" if t.acyclic else f"{t.n_on_cycles} node(s) on or below a cycle, e.g. "
                                          f"{' -> '.join(t.cycle_example)}", t.n_on_cycles))
        out.append(TreeCheck(
            "no_orphans", t.no_orphans,
            "every parent is a node" if t.no_orphans else
            f"{t.n_orphans} node(s) whose parent is not in the tree (e.g. {_ex(t.orphans)})", t.n_orphans))
        if not t.acyclic:
            depth = TreeCheck("depths_consistent", False, "not checked: the tree has cycles", 0)
        else:
            depth = TreeCheck(
                "depths_consistent", t.depths_consistent,
                f"max depth {t.max_depth}" if t.depths_consistent else
                f"{t.n_depth_mismatches} node(s) whose depth is not their parent's + 1 "
                f"(e.g. {_ex(t.depth_mismatch_examples)})", t.n_depth_mismatches or 0)
        out.append(depth)
        if t.one_root:
            top = root_children(tables.nodes)
            out.append(TreeCheck(
                "top_ranks_under_root", top.ok,
                (f"{top.n_children} node(s) under the root, ranked {top.top_rank} or unranked" if top.top_rank
                 else f"{top.n_children} node(s) under the root, none of a Linnean rank") if top.ok else
                f"{top.n_misplaced} node(s) of a lower rank than {top.top_rank} directly under the root "
                f"{top.root} (e.g. {_ex(top.misplaced)}): place them, or under a node {top.root.split(':')[0]}"
                ":incertae_sedis", top.n_misplaced))
    known = tables.nodes.select("node_id").unique()
    stray = tables.names.join(known, on="node_id", how="anti")
    out.append(TreeCheck(
        "names_known", stray.height == 0,
        f"{tables.names.height} names, all of tree nodes" if stray.height == 0 else
        f"{stray.height} name(s) of unknown nodes (e.g. {_ex(stray['node_id'].unique().sort())})", stray.height))
    cov = link_coverage(tables.links, tables.nodes["node_id"])
    dangling = int(cov["n_dangling"].sum()) if cov.height else 0
    out.append(TreeCheck(
        "links_known", dangling == 0,
        f"{int(cov['n_linked'].sum()) if cov.height else 0} linked label(s), all to tree nodes" if dangling == 0
        else f"{dangling} linked label(s) point outside the tree", dangling))
    if min_link_coverage is not None and cov.height:
        reasons = [r for r in coverage_failures(cov, min_link_coverage) if "point to node ids" not in r]
        text = "; ".join(f"{r['dataset']}: {r['n_linked']}/{r['n_labels']}" for r in cov.iter_rows(named=True))
        out.append(TreeCheck("link_coverage", not reasons, text if not reasons else "; ".join(reasons), len(reasons)))
    return out


def failed_checks(checks: list[TreeCheck]) -> list[TreeCheck]:
    """The checks that did not pass.

    Parameters
    ----------
    checks : list of TreeCheck
        Results of :func:`publishing_checks`.

    Returns
    -------
    list of TreeCheck
        Those with ``passed`` false, in order.
    """
    return [c for c in checks if not c.passed]


def checks_markdown(checks: list[TreeCheck]) -> str:
    """The checks as a Markdown table: check, passed (✅/❌), detail.

    Parameters
    ----------
    checks : list of TreeCheck
        Results of :func:`publishing_checks`.

    Returns
    -------
    str
        The table.
    """
    return markdown_table([(c.name, "✅" if c.passed else "❌", c.detail.replace("|", "/")) for c in checks],
                          columns=("check", "passed", "detail"), format_cell=lambda _c, v: v)


__all__ += ["checks_markdown"]


class ChecksFailed(SnapshotError):
    """A tree failed the publishing gate (exit code 7); ``checks`` holds every result.

    Parameters
    ----------
    name : str
        The taxonomy's name.
    checks : list[TreeCheck]
        Every check's result, passed or not.
    """

    exit_code = 7

    def __init__(self, name: str, checks: list[TreeCheck]) -> None:
        self.checks = checks
        bad = failed_checks(checks)
        super().__init__(f"{name}: not published, {len(bad)} tree check(s) failed: "
                         + "; ".join(f"{c.name}: {c.detail}" for c in bad))


def require_publishable(tables: TreeTables, *,
                        min_link_coverage: float | Mapping[str, float] | None = None) -> list[TreeCheck]:
    """Run :func:`publishing_checks`; raise :class:`ChecksFailed` if any check fails, else return them.

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.
    min_link_coverage : float or Mapping[str, float], optional
        Least share of each dataset's labels that must link (one for all, or per
        dataset); None skips the gate.

    Returns
    -------
    list[TreeCheck]
        Every check's result, when all pass.
    """
    checks = publishing_checks(tables, min_link_coverage=min_link_coverage)
    if failed_checks(checks):
        raise ChecksFailed(tables.name, checks)
    return checks


__all__ += ["ChecksFailed", "require_publishable"]
