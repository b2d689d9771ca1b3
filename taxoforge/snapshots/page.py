"""The store's catalogue page, ``index.html``: what a person browsing a store sees.

One static page, rendered from ``index.json`` alone by every publish (and ``set_latest``,
``reindex``) and written beside it atomically (local stores: temporary file + rename;
object stores: one PUT). For each taxonomy: a description (what it was built from, how
big it is) and the licences of its sources; then every version, newest first, with its
creation time, node/name/link counts, size, seed and source versions (a long one folded
in a ``<details>``, so the pull column stays in view), a summary of what changed from
the version before it (a link to the version's changes page, :mod:`.browser_changes`, where
its browser has one), a *latest* badge, the ``taxoforge pull`` command to copy, a link
to the version's browser (:mod:`.browser`) when it has one, and a *Cite* block (BibTeX of
:mod:`.bibliography` and the ``taxoforge cite`` command).

Everything that came from a store or a manifest is escaped (Jinja2 with autoescaping),
and no value is ever placed inside the page's script. The script only adds copy buttons
and, when the page is served over HTTP(S) and no public URL was given, writes the page's
own folder URL into the pull commands (the store *is* that folder); without JavaScript
the commands name the URL given at render time. A local store without a public URL is named
nowhere in the page: it says "not published", with how to publish it.
"""

from __future__ import annotations

from typing import Any

from taxoforge.snapshots.catalogue import latest_version, sorted_versions
from taxoforge.snapshots.diff import summary_text

__all__ = ["PAGE_NAME", "render_page", "pull_command", "human_size"]

PAGE_NAME = "index.html"

_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="taxoforge {{ package }}">
<title>taxoforge snapshots: {{ store_url or "not published" }}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 78rem; padding: 0 1rem; color: #1d232a; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; font-size: 1.25rem; }
.muted { color: #5b6670; } code, pre { font: 13px ui-monospace, monospace; }
table { border-collapse: collapse; width: 100%; margin-top: .6rem; }
td.sources { min-width: 11rem; max-width: 22rem; overflow-wrap: anywhere; } td.sources details pre, .cite pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0; }
td.sources summary, .cite summary { cursor: pointer; } .cite pre { background: #f3f6f8; padding: .5rem; border-radius: .25rem; max-height: 24rem; overflow: auto; }
.about { margin: .2rem 0; } .licence { margin: .2rem 0 .6rem; } .warn { color: #8a4b00; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #dde3e8; vertical-align: top; }
th { background: #f3f6f8; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; } td.created { min-width: 6.5rem; }
.badge { background: #1f7a4d; color: #fff; border-radius: .6rem; padding: 0 .45rem; font-size: 12px; margin-left: .3rem; }
.pull { display: flex; flex-wrap: wrap; gap: .3rem; align-items: center; min-width: 14rem; } .pull code { background: #f3f6f8; padding: .15rem .35rem; border-radius: .25rem; overflow-wrap: anywhere; }
button.copy { font-size: 12px; cursor: pointer; }
</style>
</head>
<body>
<h1>taxoforge snapshots</h1>
{% if not store_url %}<p class="warn" id="not-published"><strong>Not published.</strong> This store has no public URL, so the commands below name it <code>URL</code>: publish with <code>taxoforge publish --public-url URL</code> (the address the store is served at) to give readers one.</p>{% endif %}
<p class="muted">Store <code id="store-url" data-store-url="{{ store_url or 'URL' }}" data-public="{{ 'yes' if public else 'no' }}">{{ store_url or "not published" }}</code>
· {{ taxonomies|length }} taxonom{{ 'y' if taxonomies|length == 1 else 'ies' }}, {{ n_versions }} version{{ '' if n_versions == 1 else 's' }}
· updated {{ updated }}</p>
<p class="muted">Install with <code>pip install taxoforge</code>; <code>taxoforge pull NAME@VERSION --store URL</code> downloads a snapshot and checks every file's SHA-256;
<code>taxoforge list --store URL</code> lists them; <code>index.json</code> beside this page is the same catalogue for programs.</p>
{% if not taxonomies %}<p id="empty">No snapshots published yet.</p>{% endif %}
{% for tax in taxonomies %}
<section class="taxonomy" id="taxonomy-{{ tax.name }}" data-taxonomy="{{ tax.name }}">
<h2>{{ tax.name }}</h2>
<p class="about">{{ tax.description }}</p>
<p class="licence"><strong>Licence.</strong> {% for src in tax.licences %}{{ src.name }} ({{ src.released }}): <a href="{{ src.url }}" rel="noopener noreferrer">{{ src.licence }}</a>{% if not loop.last %}; {% endif %}{% else %}<span class="muted">no upstream source recorded: see the sources the tree was built from</span>{% endfor %}</p>
<p class="muted">{{ tax.versions|length }} version{{ '' if tax.versions|length == 1 else 's' }}{% if tax.latest %}; <code>{{ tax.name }}</code> means <code>{{ tax.name }}@{{ tax.latest }}</code>{% endif %}</p>
<table>
<thead><tr><th>version</th><th>created</th><th>nodes</th><th>names</th><th>links</th><th>size</th><th>seed</th><th>source versions</th><th title="what changed from the version before">changes</th><th>pull</th></tr></thead>
<tbody>
{% for v in tax.versions %}
<tr class="version" id="v-{{ tax.name }}-{{ v.version }}" data-ref="{{ v.ref }}" data-latest="{{ 'true' if v.latest else 'false' }}">
<td><code>{{ v.version }}</code>{% if v.latest %}<span class="badge">latest</span>{% endif %}{% if v.browser %}<div><a class="browse" href="{{ v.browser }}">browse</a></div>{% endif %}</td>
<td class="created">{{ v.created|replace("T", " ") }}</td>
<td class="num nodes">{{ v.nodes }}</td><td class="num">{{ v.names }}</td><td class="num">{{ v.links }}</td>
<td class="num size" data-bytes="{{ v.bytes }}">{{ v.size }}</td>
<td>{{ v.seed }}</td>
<td class="sources">{% for k, short, full in v.sources %}<div>{% if full %}<details><summary><code>{{ k }}</code> {{ short }}</summary><pre>{{ full }}</pre></details>{% else %}<code>{{ k }}</code> {{ short }}{% endif %}</div>{% endfor %}</td>
<td class="diff">{% if v.diff %}{% if v.changes %}<a class="changes" href="{{ v.changes }}" title="every change since {{ v.diff_from }}">{{ v.diff }}</a>{% else %}<span title="compared with {{ v.diff_from }}">{{ v.diff }}</span>{% endif %}{% else %}<span class="muted">{{ v.diff_none }}</span>{% endif %}</td>
<td><div class="pull"><code class="pull-command" data-ref="{{ v.ref }}">{{ v.pull }}</code><button class="copy" type="button">copy</button></div></td>
</tr>
<tr class="cite" id="cite-{{ tax.name }}-{{ v.version }}"><td colspan="10"><details><summary>Cite {{ v.ref }}</summary>
{% if v.local_only %}<p class="warn">Not published: this store has no public URL, so readers cannot pull this snapshot. Publish with <code>--public-url URL</code> (the address the store is served at) to cite it by that address.</p>{% endif %}
<p><code>{{ v.cite_command }}</code> prints this BibTeX and a CITATION.cff.</p>
<pre class="bibtex">{{ v.bibtex }}</pre></details></td></tr>
{% endfor %}
</tbody>
</table>
</section>
{% endfor %}
<script>
(function () {
  var el = document.getElementById("store-url");
  var store = el.getAttribute("data-store-url");
  if (el.getAttribute("data-public") !== "yes" && /^https?:$/.test(location.protocol)) {
    store = location.href.split("#")[0].split("?")[0].replace(/\\/[^\\/]*$/, "");
    el.textContent = store;
  } else if (el.getAttribute("data-public") !== "yes" && location.protocol === "file:") {
    store = decodeURIComponent(location.pathname).replace(/\\/[^\\/]*$/, "");  // the reader's own folder
    el.textContent = store;
  }
  var quote = function (s) { return /^[A-Za-z0-9_.:\\/@%+=,-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\\\''") + "'"; };
  document.querySelectorAll("code.pull-command").forEach(function (code) {
    code.textContent = "taxoforge pull " + code.getAttribute("data-ref") + " --store " + quote(store);
    var button = code.parentNode.querySelector("button.copy");
    button.addEventListener("click", function () {
      if (navigator.clipboard) { navigator.clipboard.writeText(code.textContent); button.textContent = "copied"; }
    });
  });
})();
</script>
</body>
</html>
"""


def human_size(n: int | None) -> str:
    """``1536`` → ``"1.5 KiB"``.

    Parameters
    ----------
    n : int or None
        How many.

    Returns
    -------
    str
        ``1536`` → ``"1.5 KiB"``.
    """
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(n)  # pragma: no cover


def _shell_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def pull_command(ref: str, store_url: str) -> str:
    """``taxoforge pull REF --store URL``, quoted for a POSIX shell.

    Parameters
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    store_url : str
        The store's URL.

    Returns
    -------
    str
        ``taxoforge pull REF --store URL``, quoted for a POSIX shell.
    """
    return f"taxoforge pull {_shell_quote(ref)} --store {_shell_quote(store_url)}"


#: a source version longer than this is folded in a ``<details>`` (its short form shown)
_FOLD_AT = 48


def _source_items(sv: Any) -> list[tuple[str, str, str | None]]:
    """``(key, short, full or None)`` per source version: a long one (a dict of package,
    file, SHA-256 …) is shown short and folded whole, so the table keeps its pull column
    in view."""
    import json

    from taxoforge.snapshots.upstreams import version_text

    from taxoforge.files.paths import without_local_paths

    if not isinstance(sv, dict):
        sv = {"": sv} if sv else {}
    sv = without_local_paths(sv)
    out = []
    for k in sorted(sv, key=str):
        v = sv[k]
        text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
        if len(text) <= _FOLD_AT:
            out.append((str(k), text, None))
        else:
            short = version_text(v) if isinstance(v, dict) else text
            short = short if len(short) <= _FOLD_AT else short[:_FOLD_AT - 1] + "…"
            out.append((str(k), short, json.dumps(v, indent=1, sort_keys=True, default=str) if not isinstance(v, str)
                        else v))
    return out


def _count(d: dict, key: str) -> str:
    v = (d or {}).get(key)
    return f"{v:,}" if isinstance(v, int) else "?"


def _browser_href(name: str, entry: dict) -> str | None:
    """The relative link to a version's browser, when its index entry says it has one (a
    path the id grammar allows: nothing from a hostile index becomes another URL)."""
    from taxoforge.snapshots.manifest import validate_name

    if not entry.get("browser"):
        return None
    try:
        return f"{validate_name(name)}/{validate_name(entry['version'], 'version')}/browse/index.html"
    except Exception:  # noqa: BLE001 - a malformed entry: no link
        return None


def _changes_href(name: str, entry: dict) -> str | None:
    """The relative link to a version's changes page, when its browser has one (written with a
    version before it to compare with)."""
    href = _browser_href(name, entry)
    if not href or not (entry.get("browser") or {}).get("changes"):
        return None
    return href.rsplit("/", 1)[0] + "/changes.html"


def _description(name: str, entry: dict, ups: list) -> str:
    """One sentence on a taxonomy: what it was built from and how big its latest version is."""
    counts = entry.get("row_counts") or {}
    nodes = counts.get("nodes")
    size = f"{nodes:,} nodes" if isinstance(nodes, int) else "nodes uncounted"
    if isinstance(counts.get("names"), int):
        size += f", {counts['names']:,} names"
    if isinstance(counts.get("links"), int) and counts["links"]:
        size += f", {counts['links']:,} dataset labels linked"
    built = ", ".join(u.name for u in ups) or "sources not recorded in its manifest"
    return (f"The {name} taxonomy as a tree, built by taxoforge from {built}; its latest version has {size}. "
            "Every version is frozen: its id is a hash of its tables.")


def render_page(idx: dict, store_url: str | None, *, public: bool = False) -> str:
    """The HTML of the catalogue of the index ``idx`` of the store at ``store_url``
    (``public``: that URL is where users reach the store, so the page keeps it).

    Parameters
    ----------
    idx : dict
        The store's parsed ``index.json``.
    store_url : str or None
        The store's URL; None for a local folder without a public URL, which the page names
        nowhere: it says "not published", and its commands name the store ``URL`` (filled in
        by the page's script when it is served over HTTP).
    public : bool, optional
        That URL is where users reach the store, so the page keeps it.

    Returns
    -------
    str
        The HTML of the catalogue of the index ``idx`` of the store at ``store_url``
        (``public``: that URL is where users reach the store, so the page keeps it).
    """
    import jinja2

    from taxoforge.snapshots.manifest import package_version

    from taxoforge.snapshots.bibliography import bibtex, reference_from_entry
    from taxoforge.snapshots.upstreams import released_text, upstreams_of

    # a citation names the public URL, or a remote store's own URL; a local folder's path never
    cite_store = store_url if store_url and (public or "://" in store_url) else None
    taxonomies = []
    n_versions = 0
    for name, tax in sorted(idx.get("taxonomies", {}).items()):
        latest = latest_version(tax)
        entries = sorted_versions(tax.get("versions", []))
        newest = next((e for e in entries if e["version"] == latest), entries[-1] if entries else {})
        rows = []
        for i, e in enumerate(entries):
            ref = f"{name}@{e['version']}"
            d = e.get("diff") or {}
            prev = entries[i - 1]["version"] if i else None
            current = bool(d) and d.get("from") == prev and "counts" in d
            rows.append({
                "version": e["version"], "ref": ref, "latest": e["version"] == latest,
                "created": e.get("created") or "", "nodes": _count(e.get("row_counts"), "nodes"),
                "names": _count(e.get("row_counts"), "names"), "links": _count(e.get("row_counts"), "links"),
                "bytes": e.get("size") if isinstance(e.get("size"), int) else "",
                "size": human_size(e.get("size") if isinstance(e.get("size"), int) else None),
                "seed": "" if e.get("seed") is None else e.get("seed"),
                "sources": _source_items(e.get("source_versions")),
                "diff": summary_text(d) if current else None, "diff_from": prev,
                "diff_none": "first version" if i == 0 else "not computed",
                "pull": pull_command(ref, store_url or "URL"),
                "browser": _browser_href(name, e),
                "changes": _changes_href(name, e) if current else None,
                "bibtex": bibtex(reference_from_entry(name, e, store=cite_store, local_only=cite_store is None)),
                "local_only": cite_store is None,
                "cite_command": f"taxoforge cite {_shell_quote(ref)} --store {_shell_quote(store_url or 'URL')}",
            })
        rows.reverse()  # newest first: what a reader comes for
        n_versions += len(rows)
        ups = upstreams_of(newest.get("source_versions"))
        taxonomies.append({"name": name, "latest": latest, "versions": rows,
                           "description": _description(name, newest, [u for u, _ in ups]),
                           "licences": [{"name": u.name, "licence": u.licence, "url": u.licence_url,
                                         "released": released_text(u, v)} for u, v in ups]})
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(_TEMPLATE).render(
        store_url=store_url, public=public, taxonomies=taxonomies, n_versions=n_versions,
        updated=idx.get("updated") or "", package=package_version())
