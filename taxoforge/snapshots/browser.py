"""A browser for every snapshot: a static page beside the catalogue, ``<store>/<name>/<version>/browse/index.html``.

Search any name of a node (scientific, vernacular, synonym, label) or its id, and see its
path to the root, its children with their subtree sizes, its depth, its names, its links out
(Wikidata, iNaturalist, Catalogue of Life, GBIF, NCBI pages, from the ids it carries), the
dataset labels linked to it, and what changed for it since the version before — itself, and
how many changes lie below it, with the children that moved in or out
(:mod:`.browser_changes`, which also writes the version's ``changes.html``). The page is
one HTML file with the project's own script and style inlined (``browser_static/``); it
reads the small, gzip-compressed JSON files :mod:`.browser_index` writes beside it, so any
static host serves it (no server code, nothing fetched from elsewhere: its Content Security
Policy allows only its own script and files). Serve the store folder over HTTP
(``python -m http.server`` in it, S3, a web server): browsers do not let a page fetch files
from ``file://``.

Publishing a snapshot writes its browser (:func:`publish_browser`, after the version is in
place, outside the publishers' lock), then marks the version's index entry (``browser``),
which makes the catalogue link it; ``taxoforge browse`` writes the browsers of versions
published before, or again. A failure to write a browser never fails the publish: it is
reported as a warning and the catalogue shows no link.

Everything shown comes from the snapshot's tables: hostile names are written into the page
as text only (``textContent``), links out only from ids that match their source's pattern.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
import warnings
from importlib import resources
from pathlib import Path

from taxoforge.snapshots.browser_index import FORMAT, BrowserData, browser_data
from taxoforge.snapshots.catalogue import sorted_versions
from taxoforge.trees.tables import TreeTables

__all__ = ["BROWSER_DIR", "LINKS", "ID_KINDS", "SEARCHES", "browser_page", "build_browser", "write_browser",
           "publish_browser", "browser_path", "link_templates"]

BROWSER_DIR = "browse"

#: links out from the ids a node carries: id prefix → the page of that id. ``pattern`` is what an
#: id of that source looks like; an id that does not match gets no link (ids are untrusted data).
LINKS = {
    "wd": {"name": "Wikidata", "url": "https://www.wikidata.org/wiki/{}", "pattern": "^Q[1-9][0-9]{0,11}$"},
    "inat": {"name": "iNaturalist", "url": "https://www.inaturalist.org/taxa/{}", "pattern": "^[1-9][0-9]{0,11}$"},
    "col": {"name": "Catalogue of Life", "url": "https://www.catalogueoflife.org/data/taxon/{}",
            "pattern": "^[A-Za-z0-9]{1,24}$"},
    "gbif": {"name": "GBIF", "url": "https://www.gbif.org/species/{}", "pattern": "^[1-9][0-9]{0,11}$"},
    "ncbi": {"name": "NCBI Taxonomy", "url": "https://www.ncbi.nlm.nih.gov/Taxonomy/Browser/wwwtax.cgi?id={}",
             "pattern": "^[1-9][0-9]{0,11}$"},
}
#: name kinds whose name is an identifier of another source (the crosswalk's), → its id prefix
ID_KINDS = {"qid": "wd", "wikidata": "wd", "inat": "inat", "inaturalist": "inat", "col": "col", "gbif": "gbif",
            "ncbi": "ncbi"}
#: searches by scientific name, for a node no id of that source names
SEARCHES = [{"name": "GBIF", "url": "https://www.gbif.org/species/search?q={}"},
            {"name": "Catalogue of Life", "url": "https://www.catalogueoflife.org/data/search?q={}"}]

_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; connect-src 'self'; img-src 'self'; script-src '{{ script_hash }}'; style-src '{{ style_hash }}'; base-uri 'none'; form-action 'none'">
<meta name="generator" content="taxoforge {{ package }}">
<title>{{ ref }} · taxoforge browser</title>
<style>{{ style|safe }}</style>
</head>
<body>
<header>
<h1>{{ taxonomy }} <code>@{{ version }}</code></h1>
<p class="muted">{{ nodes }} nodes · depth up to {{ max_depth }} · {% if diff_from %}compared with {{ diff_from }}{% else %}the first version{% endif %}
· <a href="../../../index.html">all snapshots</a>{% if store %} · store <code>{{ store }}</code>{% endif %}</p>
</header>
<main>
<aside>
<label for="q" class="muted">Search a name (scientific, common, synonym) or an id</label>
<input id="q" type="search" autocomplete="off" spellcheck="false" placeholder="e.g. Panthera leo, lion, inat:41964" autofocus>
<p id="search-status" class="muted" aria-live="polite"></p>
<ol id="results"></ol>
</aside>
<article id="node"><p class="muted">Loading…</p></article>
</main>
<p id="status" role="alert"></p>
<script type="application/json" id="tf-meta">{{ meta|safe }}</script>
<script>{{ script|safe }}</script>
</body>
</html>
"""


def _static(name: str) -> str:
    return resources.files("taxoforge.snapshots").joinpath("browser_static", name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _script_json(obj) -> str:
    """JSON safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and the line separators as
    escapes, so no text can close the element or open a comment."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def link_templates(source_versions: dict | None) -> dict:
    """:data:`LINKS` for one snapshot: ``col:`` ids link to the Catalogue of Life only when
    the ColDP source is a COL release (a source dataset's own ids are not COL's).

    Parameters
    ----------
    source_versions : dict or None
        The snapshot's ``source_versions``.

    Returns
    -------
    dict
        Id prefix → link template.
    """
    links = dict(LINKS)
    coldp = [v for k, v in (source_versions or {}).items() if str(k).split(":", 1)[0] == "coldp"]
    text = json.dumps(coldp, default=str).lower()
    if coldp and not ("catalogueoflife" in text or "checklistbank.org/col" in text or "catalogue of life" in text):
        links.pop("col")
    return links


def browser_page(meta: dict) -> str:
    """The browser's ``index.html`` for ``meta`` (:func:`build_browser`): the project's script
    and style inlined, ``meta`` as JSON data, a Content Security Policy that allows only them.

    Parameters
    ----------
    meta : dict
        The browser's metadata.

    Returns
    -------
    str
        The HTML.
    """
    import jinja2

    from taxoforge.snapshots.manifest import package_version

    script, style = _static("browser.js"), _static("browser.css")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_TEMPLATE).render(
        meta=_script_json(meta), script=script, style=style, script_hash=_csp_hash(script),
        style_hash=_csp_hash(style), package=package_version(), ref=meta["ref"], taxonomy=meta["taxonomy"],
        version=meta["version"], nodes=f"{meta['nodes']:,}", max_depth=meta["max_depth"],
        diff_from=(meta.get("diff") or {}).get("from"), store=meta.get("store"))


def build_browser(tables: TreeTables, name: str, entry: dict, *, previous: TreeTables | None = None,
                  previous_version: str | None = None, store_url: str | None = None) -> BrowserData:
    """The browser of one snapshot: the data files (:func:`~taxoforge.snapshots.browser_index.browser_data`)
    and ``index.html``.

    Parameters
    ----------
    tables : TreeTables
        The snapshot's tables.
    name : str
        The taxonomy's name.
    entry : dict
        The version's index entry (``version``, ``content_sha256``, ``created``, ``source_versions``).
    previous : TreeTables, optional
        The tables of the version before it, for what changed per node.
    previous_version : str, optional
        That version's id.
    store_url : str, optional
        The store's public URL, shown in the page.

    Returns
    -------
    BrowserData
        The files (``index.html`` among them) and the metadata.
    """
    data = browser_data(tables, previous, previous_version=previous_version, taxonomy=name, version=entry["version"])
    data.meta.update({"taxonomy": name, "version": entry["version"], "ref": f"{name}@{entry['version']}",
                      "content_sha256": entry.get("content_sha256"), "created": entry.get("created"),
                      "store": store_url, "links": link_templates(entry.get("source_versions")), "id_kinds": ID_KINDS,
                      "searches": SEARCHES})
    data.files["index.html"] = browser_page(data.meta).encode("utf-8")
    return data


def browser_path(name: str, version: str) -> str:
    """The browser's page inside a store: ``<name>/<version>/browse/index.html``.

    Parameters
    ----------
    name : str
        The taxonomy's name.
    version : str
        The version.

    Returns
    -------
    str
        The relative path.
    """
    return f"{name}/{version}/{BROWSER_DIR}/index.html"


def _write_local(store, name: str, version: str, data: BrowserData) -> None:
    """Write the files into a claimed work folder of the store, then swap it into place."""
    work, claim = store._staging("build-")
    try:
        tmp = Path(work) / BROWSER_DIR
        for rel, blob in data.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
        target = store.local_dir(name, version) / BROWSER_DIR
        old = Path(work) / "old"
        if target.exists():
            os.rename(target, old)
        os.rename(tmp, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        claim.release()


def _write_remote(store, name: str, version: str, data: BrowserData) -> None:
    """Upload the files, the page last (what links them)."""
    base = store._path(f"{name}/{version}/{BROWSER_DIR}")
    with tempfile.TemporaryDirectory(prefix="taxoforge-browser-") as tmp:
        for rel, blob in data.items():
            if rel == "index.html":
                continue
            path = Path(tmp) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
        store.fs.put(tmp.rstrip("/") + "/", base + "/", recursive=True)
    store._put(f"{name}/{version}/{BROWSER_DIR}/index.html", data.files["index.html"], "text/html; charset=utf-8")


def write_browser(store, ref: str, tables: TreeTables | None = None) -> dict:
    """Write the browser of ``ref`` into ``store`` and mark its index entry; returns the mark.

    Parameters
    ----------
    store : SnapshotStore
        A writable store.
    ref : str
        ``NAME@VERSION`` (or any reference the store resolves).
    tables : TreeTables, optional
        The version's tables, when already in memory (else read from the store).

    Returns
    -------
    dict
        The index entry's ``browser``: format, the version compared with, file count, bytes.
    """
    from taxoforge.snapshots.bibliography import public_address

    store._check_writable()
    idx = store.index()
    name, entry = store.resolve(ref)
    version = entry["version"]
    versions = sorted_versions(idx["taxonomies"][name]["versions"])
    i = next(k for k, e in enumerate(versions) if e["version"] == version)
    prev = versions[i - 1] if i else None
    tables = tables if tables is not None else store.read_tables(name, version, entry)
    previous = store.read_tables(name, prev["version"], prev) if prev else None
    data = build_browser(tables, name, entry, previous=previous, previous_version=prev["version"] if prev else None,
                         store_url=public_address(store, idx))
    (_write_local if store.is_local else _write_remote)(store, name, version, data)
    mark = {"format": FORMAT, "format_version": 1, "diff_from": prev["version"] if prev else None,
            "files": len(data.files), "bytes": sum(len(b) for b in data.files.values()),
            "changes": sum(1 for f in data.files if f.startswith("changes")) if prev else 0}
    with store.lock():
        idx = store.index()
        for e in idx["taxonomies"].get(name, {}).get("versions", []):
            if e["version"] == version:
                e["browser"] = mark
        store._write_index(idx)
    return mark


def publish_browser(store, result, tables: TreeTables | None = None):
    """Write the browser of a version just published (and again the one of the version after
    it, when the new one was inserted before it and so changed what it compares with). A
    failure is a warning, never a failed publish.

    Parameters
    ----------
    store : SnapshotStore
        The store published into.
    result : PublishResult
        What the publish returned.
    tables : TreeTables, optional
        The published tables, when in memory.

    Returns
    -------
    PublishResult
        ``result``, unchanged.
    """
    try:
        entries = store.versions(result.taxonomy)
        mine = next((e for e in entries if e["version"] == result.version), {})
        if mine.get("browser") and result.status == "unchanged":
            return result
        write_browser(store, result.ref, tables)
        fresh = store.versions(result.taxonomy)
        later = [e for e in fresh if e.get("browser") and e["browser"].get("diff_from") != _previous(fresh, e["version"])]
        for e in later:
            write_browser(store, f"{result.taxonomy}@{e['version']}")
    except Exception as e:  # noqa: BLE001 - the snapshot is published; its browser is a convenience
        warnings.warn(f"{result.ref}: its browser was not written ({type(e).__name__}: {e}); "
                      f"run `taxoforge browse {result.ref}` to write it", stacklevel=2)
    return result


def _previous(entries: list[dict], version: str) -> str | None:
    ordered = sorted_versions(entries)
    i = next((k for k, e in enumerate(ordered) if e["version"] == version), 0)
    return ordered[i - 1]["version"] if i else None
