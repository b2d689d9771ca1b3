"""SPARQL queries, kept as ``.rq`` files in ``sql/wikidata/`` and loaded by name.

The same files run against the Wikidata Query Service and, in the tests, against a local
Oxigraph endpoint; they declare every prefix they use, so they run on any SPARQL 1.1 engine.

A query has ``{{NAME}}`` placeholders. :func:`render` fills them only with values that
passed validation: ``ITEMS`` from QIDs (:func:`taxoforge.sources.wikidata.ids.validate_qids`),
``LANG`` from a language tag matching :data:`LANG_RE`, ``LANGS`` from a list of such tags
(as string literals for a ``VALUES`` block), ``EXTERNAL_IDS`` from external identifiers
matching :data:`EXTERNAL_ID_RE` (digits, such as iNaturalist taxon ids; as string literals,
the way Wikidata stores external ids). Anything else is refused.

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

__all__ = ["query_dir", "load_query", "render", "query_names", "LANG_RE", "EXTERNAL_ID_RE", "validate_lang"]

LANG_RE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$")
#: External ids put into a query: a positive decimal integer without leading zero (iNaturalist
#: taxon ids, P3151). Wikidata stores external ids as plain string literals.
EXTERNAL_ID_RE = re.compile(r"^[1-9][0-9]{0,18}$")
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


def validate_lang(lang: object, *, where: str = "lang") -> str:
    """``lang`` if it is a lower-case BCP-47 tag like ``en`` or ``pt-br`` (:data:`LANG_RE`),
    else ``ValueError`` naming ``where``."""
    if not isinstance(lang, str) or not LANG_RE.fullmatch(lang):
        raise ValueError(f"{where}: {lang!r} is not a language tag like 'en' or 'pt-br'")
    return lang


def _external_ids(ids, where: str) -> list[str]:
    out: set[str] = set()
    for i, x in enumerate(ids):
        s = str(x) if isinstance(x, int) and not isinstance(x, bool) else x
        if not isinstance(s, str) or not EXTERNAL_ID_RE.fullmatch(s):
            raise ValueError(f"{where}[{i}]: {x!r} is not an external id (expected a positive integer "
                             "without leading zeros, such as an iNaturalist taxon id)")
        out.add(s)
    return sorted(out, key=int)


def render(name: str, *, items=None, lang: str | None = None, langs=None, external_ids=None) -> str:
    """Load query ``name`` and fill its placeholders with validated values.

    >>> q = render("instance_of", items=["Q146", "wd:Q5"])
    >>> "VALUES ?item { wd:Q5 wd:Q146 }" in q
    True
    >>> 'VALUES ?inat { "7" "49591" }' in render("inat_taxon_names", external_ids=[49591, "7"], langs=["en"])
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
        values["LANG"] = validate_lang(lang, where=f"query {name!r}")
    if langs is not None:
        if isinstance(langs, str):
            raise ValueError(f"query {name!r}: langs must be a list of language tags, not the string {langs!r}")
        tags = sorted({validate_lang(x, where=f"query {name!r}: langs[{i}]") for i, x in enumerate(langs)})
        if not tags:
            raise ValueError(f"query {name!r}: empty list of languages")
        values["LANGS"] = " ".join(f'"{t}"' for t in tags)
    if external_ids is not None:
        ext = _external_ids(external_ids, where=f"query {name!r}: external_ids")
        if not ext:
            raise ValueError(f"query {name!r}: empty batch of external ids")
        values["EXTERNAL_IDS"] = " ".join(f'"{x}"' for x in ext)
    needed = set(_PLACEHOLDER.findall(text))
    missing = needed - set(values)
    if missing:
        raise ValueError(f"query {name!r} needs {sorted(missing)}")
    extra = set(values) - needed
    if extra:
        raise ValueError(f"query {name!r} has no placeholder(s) {sorted(extra)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
