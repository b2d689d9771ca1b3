"""SPARQL queries, kept as ``.rq`` files in the top-level ``sql/wikidata/`` and loaded by name.

The same files run against the Wikidata Query Service and, in the tests, against a local
Oxigraph endpoint; they declare every prefix they use, so they run on any SPARQL 1.1 engine.

A query has ``{{NAME}}`` placeholders. :func:`render` fills them only with values that
passed validation: ``ITEMS`` from QIDs (:func:`taxoforge.sources.wikidata.ids.validate_qids`),
``LANG`` from a BCP-47 language tag (RFC 5646: ``en``, ``en-GB``, ``zh-Hant``,
``sr-Latn-RS``, ``be-tarask``; :func:`language_tag`), written in lower case as WDQS stores
its tags. Anything else is refused: a tag is ASCII letters, digits and hyphens only, so no
quote, brace or space can reach a query; ``LANGS`` from a list of such tags (as string literals for a ``VALUES``
block), ``EXTERNAL_IDS`` from external identifiers matching :data:`EXTERNAL_ID_RE` (digits,
such as iNaturalist taxon ids; as string literals, the way Wikidata stores external ids),
``IDENTIFIERS`` from identifier values matching :data:`IDENTIFIER_RE` (letters, digits, ``.``,
``-``, ``_``: Catalogue of Life ids such as ``4QHKG``, WordNet 3.1 synset ids such as
``02086723-n``) and ``SEED_PROPERTY`` from a property id matching :data:`PROPERTY_RE`.

The folder installs as the package :data:`QUERY_PACKAGE` (``taxoforge/sql`` is a symbolic
link to ``sql/``; package data declared in ``pyproject.toml``), read with
:mod:`importlib.resources` in a checkout, an editable install and from a wheel alike. ``$TAXOFORGE_SQL_DIR/wikidata``, when set, replaces them.
"""

from __future__ import annotations

import os
import re
from importlib.resources import files
from pathlib import Path

from taxoforge.sources.wikidata.ids import node_id, validate_qids

__all__ = ["QUERY_PACKAGE", "query_dir", "load_query", "render", "query_names", "language_tag", "LANG_RE",
           "EXTERNAL_ID_RE", "IDENTIFIER_RE", "PROPERTY_RE"]

#: The package of the query files (the top-level ``sql/``, linked as ``taxoforge/sql``).
QUERY_PACKAGE = "taxoforge.sql"

# RFC 5646 (BCP 47), section 2.1: the "langtag" production, "privateuse" and the
# grandfathered tags; ASCII only (no \d, which would admit other scripts' digits).
_ALNUM = "[A-Za-z0-9]"
_LANGTAG = (
    r"(?:[A-Za-z]{2,3}(?:-[A-Za-z]{3}){0,3}|[A-Za-z]{4,8})"  # language (with extlang)
    r"(?:-[A-Za-z]{4})?"  # script
    r"(?:-(?:[A-Za-z]{2}|[0-9]{3}))?"  # region
    rf"(?:-(?:{_ALNUM}{{5,8}}|[0-9]{_ALNUM}{{3}}))*"  # variants
    rf"(?:-[0-9A-WYZa-wyz](?:-{_ALNUM}{{2,8}})+)*"  # extensions
    rf"(?:-[Xx](?:-{_ALNUM}{{1,8}})+)?"  # private use
)
_PRIVATEUSE = rf"[Xx](?:-{_ALNUM}{{1,8}})+"
_GRANDFATHERED = ("en-gb-oed|i-ami|i-bnn|i-default|i-enochian|i-hak|i-klingon|i-lux|i-mingo|i-navajo|i-pwn|"
                  "i-tao|i-tay|i-tsu|sgn-be-fr|sgn-be-nl|sgn-ch-de|art-lojban|cel-gaulish|no-bok|no-nyn|"
                  "zh-guoyu|zh-hakka|zh-min|zh-min-nan|zh-xiang")
#: A BCP-47 language tag (case-insensitive, as the RFC says).
LANG_RE = re.compile(rf"^(?:{_LANGTAG}|{_PRIVATEUSE}|(?i:{_GRANDFATHERED}))$")
#: External ids put into a query: a positive decimal integer without leading zero (iNaturalist
#: taxon ids, P3151). Wikidata stores external ids as plain string literals.
EXTERNAL_ID_RE = re.compile(r"^[1-9][0-9]{0,18}$")
#: Identifier values put into a query (any external-id property): letters, digits, ``.``, ``-``
#: and ``_``, at most 64 characters; no quote, brace, backslash or space can reach a query.
IDENTIFIER_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$")
#: A Wikidata property id.
PROPERTY_RE = re.compile(r"^P[1-9][0-9]{0,8}$")
_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")
_NAME_RE = re.compile(r"^[a-z0-9_]+$")
_SUFFIX = ".rq"
_texts: dict[str, str] = {}


def query_dir():
    """The folder of the Wikidata ``.rq`` files: ``$TAXOFORGE_SQL_DIR/wikidata`` when that
    variable is set, else ``wikidata`` of the package :data:`QUERY_PACKAGE`.

    Returns a :class:`importlib.resources.abc.Traversable` (a :class:`pathlib.Path` when the
    package sits in a folder).

    >>> query_dir().name
    'wikidata'

    Returns
    -------
    object
        The folder of the Wikidata ``.rq`` files: ``$TAXOFORGE_SQL_DIR/wikidata`` when
        that variable is set, else ``wikidata`` of the package :data:`QUERY_PACKAGE`.
    """
    env = os.environ.get("TAXOFORGE_SQL_DIR")
    if env:
        folder = Path(env) / "wikidata"
        if not folder.is_dir():
            raise FileNotFoundError(f"TAXOFORGE_SQL_DIR={env}: no folder {folder} with the .rq queries")
        return folder
    folder = files(QUERY_PACKAGE) / "wikidata"
    if not folder.is_dir():
        raise FileNotFoundError(f"package {QUERY_PACKAGE} has no wikidata/ folder of .rq queries ({folder})")
    return folder


def query_names() -> list[str]:
    """Names of the queries (their file names without ``.rq``), sorted.

    >>> {"instance_of", "subclass_of", "labels"} <= set(query_names())
    True

    Returns
    -------
    list[str]
        Names of the queries (their file names without ``.rq``), sorted.
    """
    return sorted(p.name[: -len(_SUFFIX)] for p in query_dir().iterdir() if p.name.endswith(_SUFFIX) and p.is_file())


def load_query(name: str) -> str:
    """The text of ``sql/wikidata/<name>.rq``; ``KeyError`` naming the known queries if absent.

    Parameters
    ----------
    name : str
        The name.

    Returns
    -------
    str
        The text of ``sql/wikidata/<name>.rq``; ``KeyError`` naming the known queries if
        absent.
    """
    if not _NAME_RE.fullmatch(name):
        raise ValueError(f"bad query name {name!r}")
    folder = query_dir()
    path = folder / f"{name}{_SUFFIX}"
    if not path.is_file():
        raise KeyError(f"no query {name!r} in {folder}; known: {query_names()}")
    key = str(path)
    if key not in _texts:
        _texts[key] = path.read_text(encoding="utf-8")
    return _texts[key]


def language_tag(tag: object, *, where: str = "lang") -> str:
    """``tag`` checked against BCP 47 and lower-cased (tags are case-insensitive; WDQS and
    Oxigraph store them in lower case).

    >>> [language_tag(t) for t in ("en", "en-GB", "zh-Hant", "sr-Latn-RS")]
    ['en', 'en-gb', 'zh-hant', 'sr-latn-rs']
    >>> language_tag('en") } #')
    Traceback (most recent call last):
    ...
    ValueError: lang: 'en") } #' is not a BCP-47 language tag like 'en', 'en-GB' or 'zh-Hant'

    Parameters
    ----------
    tag : object
        A language tag.
    where : str, optional
        What it is, for messages.

    Returns
    -------
    str
        ``tag`` checked against BCP 47 and lower-cased (tags are case-insensitive; WDQS
        and Oxigraph store them in lower case).
    """
    if not isinstance(tag, str) or len(tag) > 64 or not LANG_RE.fullmatch(tag):
        raise ValueError(f"{where}: {tag!r} is not a BCP-47 language tag like 'en', 'en-GB' or 'zh-Hant'")
    return tag.lower()


def _external_ids(ids, where: str) -> list[str]:
    out: set[str] = set()
    for i, x in enumerate(ids):
        s = str(x) if isinstance(x, int) and not isinstance(x, bool) else x
        if not isinstance(s, str) or not EXTERNAL_ID_RE.fullmatch(s):
            raise ValueError(f"{where}[{i}]: {x!r} is not an external id (expected a positive integer "
                             "without leading zeros, such as an iNaturalist taxon id)")
        out.add(s)
    return sorted(out, key=int)


def render(name: str, *, items=None, lang: str | None = None, langs=None, external_ids=None,
           identifiers=None, seed_property: str | None = None) -> str:
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

    Parameters
    ----------
    name : str
        The name.
    items : optional
        QIDs for ``VALUES``.
    lang : str, optional
        A language code.
    langs : optional
        Language tags for ``VALUES``.
    external_ids : optional
        External ids (iNaturalist …) for ``VALUES``.
    identifiers : optional
        Identifier values of any external-id property for ``VALUES`` (:data:`IDENTIFIER_RE`).
    seed_property : str, optional
        A property id (:data:`PROPERTY_RE`) for ``SEED_PROPERTY``.

    Returns
    -------
    str
        The query text.
    """
    text = load_query(name)
    values: dict[str, str] = {}
    if items is not None:
        qids = validate_qids(items, where="items")
        if not qids:
            raise ValueError(f"query {name!r}: empty batch of items")
        values["ITEMS"] = " ".join(node_id(q) for q in qids)
    if lang is not None:
        values["LANG"] = language_tag(lang, where=f"query {name!r}")
    if langs is not None:
        if isinstance(langs, str):
            raise ValueError(f"query {name!r}: langs must be a list of language tags, not the string {langs!r}")
        tags = sorted({language_tag(x, where=f"query {name!r}: langs[{i}]") for i, x in enumerate(langs)})
        if not tags:
            raise ValueError(f"query {name!r}: empty list of languages")
        values["LANGS"] = " ".join(f'"{t}"' for t in tags)
    if external_ids is not None:
        ext = _external_ids(external_ids, where=f"query {name!r}: external_ids")
        if not ext:
            raise ValueError(f"query {name!r}: empty batch of external ids")
        values["EXTERNAL_IDS"] = " ".join(f'"{x}"' for x in ext)
    if identifiers is not None:
        vals: set[str] = set()
        for i, x in enumerate(identifiers):
            if not isinstance(x, str) or not IDENTIFIER_RE.fullmatch(x):
                raise ValueError(f"query {name!r}: identifiers[{i}]: {x!r} is not an identifier (letters, digits, "
                                 "'.', '-', '_')")
            vals.add(x)
        if not vals:
            raise ValueError(f"query {name!r}: empty batch of identifiers")
        values["IDENTIFIERS"] = " ".join(f'"{x}"' for x in sorted(vals))
    if seed_property is not None:
        if not isinstance(seed_property, str) or not PROPERTY_RE.fullmatch(seed_property):
            raise ValueError(f"query {name!r}: seed_property {seed_property!r} is not a property id like 'P3151'")
        values["SEED_PROPERTY"] = seed_property
    needed = set(_PLACEHOLDER.findall(text))
    missing = needed - set(values)
    if missing:
        raise ValueError(f"query {name!r} needs {sorted(missing)}")
    extra = set(values) - needed
    if extra:
        raise ValueError(f"query {name!r} has no placeholder(s) {sorted(extra)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
