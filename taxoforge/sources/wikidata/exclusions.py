"""The default exclusion list: Wikidata classes removed (with their edges) before cycles are broken.

These classes are about Wikimedia's own pages, about classes themselves (meta-classes), or
mix the class and instance levels; through them unrelated classes become each other's
ancestors and cycles appear (Snæbjarnarson et al. 2025 [1] §4.1; docs/method.md#from-a-graph-to-a-tree). The list starts from
YAGO 4.5's ``badClasses`` (``02-make-taxonomy.py``; Suchanek et al., SIGIR 2024), keeping the
entries that are meta or Wikimedia-internal. YAGO's domain-specific entries (geographical
feature, facility, territory, chemical entity, scholarly article, …) are *not* here: YAGO drops
them because its own schema covers those branches, while for a recognition benchmark they are
ordinary content classes.

Unlike YAGO, which drops a bad class *and its subtree*, the tree builder removes only the
class and its edges: its subclasses stay in the tree under their other parents, or under the
root when they had no other.

A user list is a text file with one QID per line, optionally followed by a tab or ``#`` and a
reason; blank lines and lines starting with ``#`` are ignored (:func:`load_exclusions`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from taxoforge.sources.wikidata.ids import node_id, validate_qid

__all__ = ["DEFAULT_EXCLUSIONS", "load_exclusions", "exclusion_node_ids"]

# QID -> why it is excluded. One entry per line, as in YAGO 4.5.
DEFAULT_EXCLUSIONS: dict[str, str] = {
    # Wikimedia's own pages: they classify articles, not things in the world.
    "Q17379835": "Wikimedia page outside the main knowledge tree (YAGO 4.5)",
    "Q4167836": "Wikimedia category: a page grouping articles, not a class of things (YAGO 4.5)",
    "Q15138389": "Wikimedia article page (YAGO 4.5)",
    "Q17362920": "Wikimedia duplicated page (YAGO 4.5)",
    "Q21286738": "Wikimedia duplicated item (YAGO 4.5)",
    "Q17442446": "Wikimedia internal item (YAGO 4.5)",
    "Q15474042": "Wikimedia internal item (YAGO 4.5: 'same' as Q17442446)",
    "Q111279923": "Wikimedia internal item (YAGO 4.5: 'same' as Q17442446)",
    "Q4167410": "Wikimedia disambiguation page (YAGO 4.5)",
    "Q13406463": "Wikimedia list article (YAGO 4.5)",
    "Q12139612": "list: lists are pages, not kinds of their members (YAGO 4.5)",
    "Q80096233": "list (YAGO 4.5: 'Lists')",
    "Q12335479": "Wikimedia templates (YAGO 4.5)",
    "Q17524420": "aspect of history: a Wikipedia article type, e.g. 'history of X' (YAGO 4.5)",
    "Q18340514": "article about events in a specific year or time period (YAGO 4.5)",
    # Meta-classes: classes of classes put the class level under the instance level.
    "Q24017414": "second-order class: its instances are classes, so it sits above and below them (YAGO 4.5)",
    "Q19478619": "metaclass: class of classes (YAGO 4.5)",
    "Q5127848": "class: the class of all classes; everything is under it, which makes cycles (YAGO 4.5)",
    "Q107467117": "type of award: a second-order class of awards (YAGO 4.5)",
    # Roles and occupations: instance/class confusion (YAGO 4.5: "instances of 'lawyer' become
    # instances of 'job' and thus of 'economic activity'").
    "Q192581": "job: makes people's occupations economic activities (YAGO 4.5)",
    "Q12737077": "occupation: same instance/class confusion as job (YAGO 4.5)",
    "Q28640": "profession: same instance/class confusion as job (YAGO 4.5)",
    "Q4164871": "position/role: same instance/class confusion as job (YAGO 4.5)",
}


def load_exclusions(path: str | os.PathLike) -> dict[str, str]:
    """Read an exclusion list file (module docstring): ``{QID: reason}``.

    Raises ``ValueError`` naming the file and line of anything that is not a QID.

    Parameters
    ----------
    path : str or os.PathLike
        The exclusion list file.

    Returns
    -------
    dict[str, str]
        ``{QID: reason}``.
    """
    path = Path(path)
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            for sep in ("\t", "#", " "):
                if sep in line:
                    qid, reason = line.split(sep, 1)
                    break
            else:
                qid, reason = line, ""
            try:
                q = validate_qid(qid.strip(), where=f"{path}:{lineno}")
            except ValueError as e:
                raise ValueError(f"{e}; expected 'Q<digits>' optionally followed by a tab and a reason") from None
            out[q] = reason.strip().lstrip("#").strip()
    return out


def exclusion_node_ids(
    *, use_default: bool = True, file: str | os.PathLike | None = None, extra: Iterable[str] = ()
) -> dict[str, str]:
    """The exclusion list as ``{node id: reason}``: the default list (if ``use_default``),
    plus a file, plus extra QIDs.

    Parameters
    ----------
    use_default : bool, optional
        Whether the shipped list is included.
    file : str or os.PathLike, optional
        An exclusion list file to add.
    extra : Iterable[str], optional
        QIDs to add.

    Returns
    -------
    dict[str, str]
        The exclusion list as ``{node id: reason}``: the default list (if
        ``use_default``), plus a file, plus extra QIDs.
    """
    out: dict[str, str] = {}
    if use_default:
        out.update({node_id(q): r for q, r in DEFAULT_EXCLUSIONS.items()})
    if file:
        out.update({node_id(q): r or f"listed in {file}" for q, r in load_exclusions(file).items()})
    for i, q in enumerate(extra):
        out[node_id(validate_qid(q, where=f"exclude[{i}]"))] = "given in the configuration"
    return dict(sorted(out.items()))
