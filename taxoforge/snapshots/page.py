"""The store's catalogue page, ``index.html``: what a person browsing a store sees.

One static page, rendered from ``index.json`` alone by every publish (and ``set_latest``,
``reindex``) and written beside it atomically (local stores: temporary file + rename;
object stores: one PUT). For each taxonomy: every version, oldest first, with its
creation time, node/name/link counts, size, seed and source versions, a summary of what
changed from the version before it, a *latest* badge, and the ``taxoforge pull`` command
to copy.

Everything that came from a store or a manifest is escaped (Jinja2 with autoescaping),
and no value is ever placed inside the page's script. The script only adds copy buttons
and, when the page is served over HTTP(S) and no public URL was given, writes the page's
own folder URL into the pull commands (the store *is* that folder); without JavaScript
the commands name the URL given at render time.
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
<title>taxoforge snapshots: {{ store_url }}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 78rem; padding: 0 1rem; color: #1d232a; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; font-size: 1.25rem; }
.muted { color: #5b6670; } code { font: 13px ui-monospace, monospace; }
table { border-collapse: collapse; width: 100%; margin-top: .6rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #dde3e8; vertical-align: top; }
th { background: #f3f6f8; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.created { white-space: nowrap; }
.badge { background: #1f7a4d; color: #fff; border-radius: .6rem; padding: 0 .45rem; font-size: 12px; margin-left: .3rem; }
.pull { display: flex; gap: .4rem; align-items: center; } .pull code { background: #f3f6f8; padding: .15rem .35rem; border-radius: .25rem; }
button.copy { font-size: 12px; cursor: pointer; }
</style>
</head>
<body>
<h1>taxoforge snapshots</h1>
<p class="muted">Store <code id="store-url" data-store-url="{{ store_url }}" data-public="{{ 'yes' if public else 'no' }}">{{ store_url }}</code>
· {{ taxonomies|length }} taxonom{{ 'y' if taxonomies|length == 1 else 'ies' }}, {{ n_versions }} version{{ '' if n_versions == 1 else 's' }}
· updated {{ updated }}</p>
<p class="muted">Install with <code>pip install taxoforge</code>; <code>taxoforge pull NAME@VERSION --store URL</code> downloads a snapshot and checks every file's SHA-256;
<code>taxoforge list --store URL</code> lists them; <code>index.json</code> beside this page is the same catalogue for programs.</p>
{% if not taxonomies %}<p id="empty">No snapshots published yet.</p>{% endif %}
{% for tax in taxonomies %}
<section class="taxonomy" id="taxonomy-{{ tax.name }}" data-taxonomy="{{ tax.name }}">
<h2>{{ tax.name }}</h2>
<p class="muted">{{ tax.versions|length }} version{{ '' if tax.versions|length == 1 else 's' }}{% if tax.latest %}; <code>{{ tax.name }}</code> means <code>{{ tax.name }}@{{ tax.latest }}</code>{% endif %}</p>
<table>
<thead><tr><th>version</th><th>created</th><th>nodes</th><th>names</th><th>links</th><th>size</th><th>seed</th><th>source versions</th><th title="what changed from the version before">changes</th><th>pull</th></tr></thead>
<tbody>
{% for v in tax.versions %}
<tr class="version" id="v-{{ tax.name }}-{{ v.version }}" data-ref="{{ v.ref }}" data-latest="{{ 'true' if v.latest else 'false' }}">
<td><code>{{ v.version }}</code>{% if v.latest %}<span class="badge">latest</span>{% endif %}</td>
<td class="created">{{ v.created }}</td>
<td class="num nodes">{{ v.nodes }}</td><td class="num">{{ v.names }}</td><td class="num">{{ v.links }}</td>
<td class="num size" data-bytes="{{ v.bytes }}">{{ v.size }}</td>
<td>{{ v.seed }}</td>
<td class="sources">{% for k, val in v.sources %}<div><code>{{ k }}</code> {{ val }}</div>{% endfor %}</td>
<td class="diff">{% if v.diff %}<span title="compared with {{ v.diff_from }}">{{ v.diff }}</span>{% else %}<span class="muted">{{ v.diff_none }}</span>{% endif %}</td>
<td><div class="pull"><code class="pull-command" data-ref="{{ v.ref }}">{{ v.pull }}</code><button class="copy" type="button">copy</button></div></td>
</tr>
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


def _source_items(sv: Any) -> list[tuple[str, str]]:
    import json

    if not isinstance(sv, dict):
        return [("", str(sv))] if sv else []
    out = []
    for k in sorted(sv):
        v = sv[k]
        out.append((str(k), v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)))
    return out


def _count(d: dict, key: str) -> str:
    v = (d or {}).get(key)
    return f"{v:,}" if isinstance(v, int) else "?"


def render_page(idx: dict, store_url: str, *, public: bool = False) -> str:
    """The HTML of the catalogue of the index ``idx`` of the store at ``store_url``
    (``public``: that URL is where users reach the store, so the page keeps it).

    Parameters
    ----------
    idx : dict
        The store's parsed ``index.json``.
    store_url : str
        The store's URL.
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

    taxonomies = []
    n_versions = 0
    for name, tax in sorted(idx.get("taxonomies", {}).items()):
        latest = latest_version(tax)
        entries = sorted_versions(tax.get("versions", []))
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
                "pull": pull_command(ref, store_url),
            })
        n_versions += len(rows)
        taxonomies.append({"name": name, "latest": latest, "versions": rows})
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(_TEMPLATE).render(
        store_url=store_url, public=public, taxonomies=taxonomies, n_versions=n_versions,
        updated=idx.get("updated") or "", package=package_version())
