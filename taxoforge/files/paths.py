"""Paths built from names that came from outside (a store's index, a manifest, a URL):
:func:`path_inside` refuses any that would land outside the folder it is meant for; and
:func:`default_cache_dir`, the folder of taxoforge's caches (derived data, rebuilt when lost)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["UnsafePath", "path_inside", "default_cache_dir"]


def default_cache_dir() -> Path:
    """``$TAXOFORGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/taxoforge``, else ``~/.cache/taxoforge``."""
    env = os.environ.get("TAXOFORGE_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "taxoforge"


class UnsafePath(ValueError):
    """A path built from outside names would leave the folder it belongs in."""


def path_inside(root: str | os.PathLike, *parts: str) -> Path:
    """``root / parts…``, after checking that it resolves (symlinks and ``..`` followed) to
    ``root`` itself or somewhere below it; :class:`UnsafePath` otherwise."""
    base = Path(root)
    path = base.joinpath(*parts)
    real_root, real = base.resolve(), path.resolve()
    if real != real_root and real_root not in real.parents:
        raise UnsafePath(f"{path} leaves {base} (it resolves to {real}): refused")
    return path
