"""SPARQL queries, kept as ``.rq`` files in ``sql/wikidata/`` and loaded by name.

The same files run against the Wikidata Query Service and, in the tests, against a local
Oxigraph endpoint; they declare every prefix they use, so they run on any SPARQL 1.1 engine.

A query has ``{{NAME}}`` placeholders. :func:`render` fills them only with values that
passed validation: ``ITEMS`` from QIDs (:func:`taxoforge.sources.wikidata.ids.validate_qids`),
``LANG`` from a language tag matching :data:`LANG_RE`. Anything else is refused.

The folder is found, in order, at ``$TAXOFORGE_SQL_DIR/wikidata``, at ``sql/wikidata`` of
the source checkout this module sits in (editable install, repo root), and in the
installed ``sql`` package data.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from taxoforge.sources.wikidata.ids import node_id, validate_qids

__all__ = ["query_dir", "load_query", "render", "query_names", "LANG_RE"]

LANG_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$")
_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")
_NAME_RE = re.compile(r"^[a-z0-9_]+$")


def query_dir() -> Path:
    """The folder holding the Wikidata ``.rq`` files (see the module docstring)."""
    tried = []
    env = os.environ.get("TAXOFORGE_SQL_DIR")
    if env:
        p = Path(env) / "wikidata"
        if p.is_dir():
            return p
        tried.append(str(p))
    repo = Path(__file__).resolve().parents[3] / "sql" / "wikidata"
    if repo.is_dir():
        return repo
    tried.append(str(repo))
    try:  # a non-editable install ships sql/ as package data
        from importlib.resources import files

        p = Path(str(files("sql") / "wikidata"))
        if p.is_dir():
            return p
        tried.append(str(p))
    except (ModuleNotFoundError, TypeError):
        tried.append("installed package 'sql'")
    raise FileNotFoundError(f"no sql/wikidata folder with the .rq queries; looked in: {', '.join(tried)}")


def query_names() -> list[str]:
    return sorted(p.stem for p in query_dir().glob("*.rq"))


@lru_cache(maxsize=None)
def _load(folder: str, name: str) -> str:
    return (Path(folder) / f"{name}.rq").read_text(encoding="utf-8")


def load_query(name: str) -> str:
    """The text of ``sql/wikidata/<name>.rq``; ``KeyError`` naming the known queries if absent."""
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"bad query name {name!r}")
    folder = query_dir()
    if not (folder / f"{name}.rq").is_file():
        raise KeyError(f"no query {name!r} in {folder}; known: {query_names()}")
    return _load(str(folder), name)


def render(name: str, *, items=None, lang: str | None = None) -> str:
    """Load query ``name`` and fill its placeholders with validated values.

    >>> q = render("instance_of", items=["Q146", "wd:Q5"])
    >>> "VALUES ?item { wd:Q5 wd:Q146 }" in q
    True
    >>> render("instance_of", items=["Q1 } ; DROP ALL"])
    Traceback (most recent call last):
    ...
    ValueError: items[0]: 'Q1 } ; DROP ALL' is not a Wikidata QID (expected 'Q' followed by digits)
    """
    text = load_query(name)
    values: dict[str, str] = {}
    if items is not None:
        qids = validate_qids(items, where="items")
        if not qids:
            raise ValueError(f"query {name!r}: empty batch of items")
        values["ITEMS"] = " ".join(node_id(q) for q in qids)
    if lang is not None:
        if not isinstance(lang, str) or not LANG_RE.fullmatch(lang):
            raise ValueError(f"query {name!r}: {lang!r} is not a language tag like 'en' or 'pt-br'")
        values["LANG"] = lang
    needed = set(_PLACEHOLDER.findall(text))
    missing = needed - set(values)
    if missing:
        raise ValueError(f"query {name!r} needs {sorted(missing)}")
    extra = set(values) - needed
    if extra:
        raise ValueError(f"query {name!r} has no placeholder(s) {sorted(extra)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
