"""Which taxonomy a model-output file in a watched folder is scored against.

The rule (the Dagster sensor and the scoring assets follow it; so can any script):

1. **Sidecar file.** The nearest ``taxonomy.txt`` in the file's folder or a folder above
   it (up to the watched folder itself) names the taxonomy: one line, ``NAME``,
   ``NAME@VERSION``, ``sha256:HEX``, or a path to a tree or snapshot folder (relative to
   the sidecar's folder). Blank lines and lines starting with ``#`` are ignored. Put one
   in ``model_outputs/vlm4bio/`` reading ``inaturalist`` and every file under it is scored
   against the latest ``inaturalist`` snapshot; ``inaturalist@3f2a…`` pins a version.
2. **Folder name.** Otherwise, when the file lies under a first-level folder named after
   a known taxonomy (``model_outputs/inaturalist/…``, ``model_outputs/wordnet/…``), that
   taxonomy.
3. **Default.** Otherwise the default given (the code location's
   ``ScoringResource.taxonomy``, ``imagenet1k`` unless configured), or none.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / "vlm4bio" / "birds").mkdir(parents=True)
>>> _ = (root / "vlm4bio" / "taxonomy.txt").write_text("# scored against iNaturalist\\ninaturalist@abc\\n")
>>> taxonomy_for_file(root / "vlm4bio" / "birds" / "run.jsonl", root, default="imagenet1k").ref
'inaturalist@abc'
>>> (root / "wordnet").mkdir()
>>> taxonomy_for_file(root / "wordnet" / "x.jsonl", root, default="imagenet1k", known=["wordnet"]).rule
'folder name'
>>> taxonomy_for_file(root / "x.jsonl", root, default="imagenet1k").ref
'imagenet1k'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SIDECAR", "FolderTaxonomy", "taxonomy_for_file", "read_sidecar", "taxonomy_name"]

#: The sidecar file naming a folder's taxonomy.
SIDECAR = "taxonomy.txt"


@dataclass(frozen=True)
class FolderTaxonomy:
    """``ref``: what to resolve (``NAME[@VERSION]``, ``sha256:…`` or a folder path);
    ``rule``: ``"sidecar"``, ``"folder name"`` or ``"default"``; ``source``: the sidecar's
    path (for ``"sidecar"``).

    Attributes
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    rule : str
        ``"sidecar"``, ``"folder name"`` or ``"default"``.
    source : str or None
        The source.
    """

    ref: str
    rule: str
    source: str | None = None

    @property
    def name(self) -> str:
        """The taxonomy name of ``ref`` (``NAME`` of ``NAME@VERSION``; the ref itself otherwise)."""
        return taxonomy_name(self.ref)


def taxonomy_name(ref: str) -> str:
    """``NAME`` of ``NAME@VERSION`` (a ``sha256:`` reference or a path is returned as it is).

    Parameters
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.

    Returns
    -------
    str
        ``NAME`` of ``NAME@VERSION`` (a ``sha256:`` reference or a path is returned as
        it is).
    """
    if ref.startswith("sha256:") or os.sep in ref or "/" in ref:
        return ref
    return ref.split("@", 1)[0]


def read_sidecar(path: str | os.PathLike) -> str:
    """The taxonomy a sidecar names (module docstring); ``ValueError`` naming the file when
    it names none or more than one. A relative folder path is made absolute from the
    sidecar's folder.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    str
        The taxonomy a sidecar names (module docstring); ``ValueError`` naming the file
        when it names none or more than one.
    """
    path = Path(path)
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    refs = [ln for ln in lines if ln and not ln.startswith("#")]
    if len(refs) != 1:
        raise ValueError(f"{path}: expected one line naming the taxonomy (NAME, NAME@VERSION, sha256:HEX or a "
                         f"folder), found {len(refs)}")
    ref = refs[0]
    if not ref.startswith("sha256:") and (ref.startswith(".") or "/" in ref or os.sep in ref):
        p = Path(ref)
        ref = str(p if p.is_absolute() else (path.parent / p).resolve())
    return ref


def taxonomy_for_file(file: str | os.PathLike, root: str | os.PathLike, *, default: str | None = None,
                      known=()) -> FolderTaxonomy | None:
    """The taxonomy ``file`` (under the watched folder ``root``) is scored against, by the
    rule of the module docstring; None when no rule applies and there is no default.

    Parameters
    ----------
    file : str or os.PathLike
        A results file.
    root : str or os.PathLike
        The watched folder ``file`` lies in.
    default : str, optional
        The taxonomy when no rule of the folder applies.
    known : optional
        Taxonomy names the store has (a folder named after one picks it).

    Returns
    -------
    FolderTaxonomy or None
        The taxonomy ``file`` (under the watched folder ``root``) is scored against, by
        the rule of the module docstring; None when no rule applies and there is no
        default.
    """
    file, root = Path(file), Path(root)
    try:
        rel = file.resolve().relative_to(root.resolve())
    except ValueError:
        rel = None
    folder = file.parent
    stop = root.resolve()
    while True:
        side = folder / SIDECAR
        if side.is_file():
            return FolderTaxonomy(read_sidecar(side), "sidecar", str(side))
        if rel is None or folder.resolve() == stop or folder.parent == folder:
            break
        folder = folder.parent
    if rel is not None and len(rel.parts) > 1 and rel.parts[0] in set(known):
        return FolderTaxonomy(rel.parts[0], "folder name")
    return FolderTaxonomy(default, "default") if default else None
