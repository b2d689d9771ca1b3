"""Benchmark: the snapshot browser in headless Chromium, against a store served on 127.0.0.1.

Input: ``full``, the offline iNaturalist tree (1.38 M taxa, :func:`benchmarks.trees.inat_full_tree`)
with the English names WordNet gives its taxa (:func:`taxoforge.sources.wordnet_names.with_wordnet_names`,
as the ``inaturalist_tree`` asset adds them);
``small`` and ``tiny``, trees built from the Wikidata-shaped graph
(:func:`benchmarks.generate.wikidata_like_edges`). A second version is derived from it —
some leaves removed, some nodes renamed, some leaves moved to another parent — so the
browser has changes to show. Both are published into a fresh store (with ``public_url``) and
the newer version's browser is written (timed: the cost publishing adds).

The store is served by a plain static HTTP server (:mod:`http.server`, no compression, no
cache headers) on 127.0.0.1, and Debian's Chromium is driven over the DevTools protocol
(``tests/chromium.py``) with its HTTP cache off:

* **first paint** — ``first-contentful-paint`` of the page (the search box and the header),
  and **ready** — the root node shown with its children, both from the navigation's start,
  over ``loads`` fresh loads;
* **search** — from the ``input`` event to the results in the page and the next frame:
  whole names (scientific, English), their first three letters, one letter, node ids, names
  typed one key at a time, and names with a typo (answered with the nearest names); *cold*
  when the answer needed a file not loaded before. The version's changes page (every node
  added, removed, moved, renamed) is measured by its size.

Baseline, same server, same Chromium, same queries: the naive static page — one gzip JSON
of every name (key, name, id) fetched at load, each query a scan of it.

    python -m benchmarks.bench_browser --size full [--screens DIR]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["run", "SIZES"]

SIZES = {
    "tiny": {"scale": 0.002, "loads": 2, "queries": 12},
    "small": {"scale": 0.05, "loads": 3, "queries": 40},
    "full": {"scale": None, "loads": 5, "queries": 60},  # None: the real iNaturalist tree
}

BASELINE_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>baseline</title></head><body>
<h1>Every name in one file</h1><input id="q" type="search"><ol id="results"></ol>
<script>
(async function () {
  const r = await fetch("names.json.gz");
  const s = (await r.blob()).stream().pipeThrough(new DecompressionStream("gzip"));
  const all = JSON.parse(await new Response(s).text());
  window.__tfReady = performance.now();
  const key = t => String(t).normalize("NFKD").replace(/\\p{M}/gu, "").toLowerCase().replace(/[_\\s]+/g, " ").trim();
  document.getElementById("q").addEventListener("input", ev => {
    const q = key(ev.target.value), out = document.getElementById("results");
    out.textContent = "";
    let n = 0;
    for (let i = 0; i < all.length && n < 50; i++) {
      if (all[i][0].startsWith(q) || all[i][0].includes(" " + q)) {
        const li = document.createElement("li"); li.textContent = all[i][1] + " " + all[i][2]; out.appendChild(li); n++;
      }
    }
    document.dispatchEvent(new CustomEvent("tf-searched", {detail: {query: ev.target.value, count: n}}));
  });
  document.body.setAttribute("data-ready", "1");
  document.dispatchEvent(new CustomEvent("tf-ready"));
})();
</script></body></html>
"""

SEARCH_JS = """(async (q) => {
  const before = performance.getEntriesByType("resource").length;
  const box = document.getElementById("q");
  const done = new Promise(r => document.addEventListener("tf-searched", function h(e) {
    if (e.detail.query === q) { document.removeEventListener("tf-searched", h); r(e.detail); } }));
  const t0 = performance.now();
  box.value = q; box.dispatchEvent(new Event("input"));
  const d = await done;
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  return {ms: performance.now() - t0, count: d.count, cold: performance.getEntriesByType("resource").length > before};
})"""
LOAD_JS = """(async () => {
  if (!document.body.getAttribute("data-ready")) {
    await new Promise(r => document.addEventListener("tf-ready", r));
  }
  const fcp = await new Promise(r => {  // the paint entry may come after the page's own ready event
    const seen = () => performance.getEntriesByName("first-contentful-paint")[0];
    if (seen()) { r(seen()); return; }
    new PerformanceObserver(() => { if (seen()) { r(seen()); } }).observe({type: "paint", buffered: true});
    setTimeout(() => r(seen() || null), 10000);
  });
  return {first_paint_ms: fcp ? fcp.startTime : null, ready_ms: window.__tfReady,
          bytes: performance.getEntriesByType("resource").reduce((a, e) => a + (e.encodedBodySize || 0), 0)
                 + performance.getEntriesByType("navigation")[0].encodedBodySize};
})()"""


def _trees(scale: float | None):
    """The newer version (the input) and an older one derived from it."""
    import polars as pl

    from taxoforge.trees.tables import TreeTables

    if scale is None:
        from benchmarks.trees import inat_full_tree
        from taxoforge.sources.wordnet_names import with_wordnet_names

        tree = with_wordnet_names(inat_full_tree())
        new = TreeTables("inaturalist", tree.nodes, names=tree.names, links=tree.links, report=tree.report,
                         info=dict(tree.info))
    else:
        from benchmarks.generate import wikidata_like_edges
        from taxoforge.trees.build import build_tree

        edges, _ = wikidata_like_edges(scale, seed=11)
        new = TreeTables.from_build("bench", build_tree(edges, source="wd"), info={"source_versions": {"bench": scale}})
    rng = random.Random(5)
    nodes = new.nodes
    leaves = nodes.filter(pl.col("is_leaf") & (pl.col("depth") > 1))["node_id"].to_list()
    rng.shuffle(leaves)
    k = max(3, len(leaves) // 2000)
    removed, moved, renamed = set(leaves[:k]), leaves[k:2 * k], leaves[2 * k:3 * k]
    inner = nodes.filter(~pl.col("is_leaf") & (pl.col("depth") > 0)).select("node_id", "depth")
    by_depth = {d: g["node_id"].to_list() for (d,), g in inner.group_by("depth")}
    depth_of = dict(nodes.select("node_id", "depth").iter_rows())
    new_parent = {c: rng.choice(by_depth.get(depth_of[c] - 1) or [None]) for c in moved}  # a parent at the same depth
    old_nodes = (nodes.filter(~pl.col("node_id").is_in(list(removed)))
                 .with_columns(pl.col("node_id").replace_strict({c: p for c, p in new_parent.items() if p},
                                                                default=None).fill_null(pl.col("parent_id"))
                               .alias("parent_id"),
                               pl.when(pl.col("node_id").is_in(renamed)).then(pl.col("label") + " (old name)")
                               .otherwise(pl.col("label")).alias("label")))
    old_names = new.names.filter(~pl.col("node_id").is_in(list(removed)))
    old = TreeTables(new.name, old_nodes, names=old_names, links=new.links.filter(
        ~pl.col("node_id").is_in(list(removed)) | pl.col("node_id").is_null()), report=new.report, info=dict(new.info))
    return new, old


def _queries(tree, n: int, seed: int = 3) -> dict[str, list[str]]:
    import polars as pl

    rng = random.Random(seed)
    names = tree.names
    sci = (names.filter(pl.col("kind").is_in(["scientific", "label"]))["name"].unique().sort().to_list()
           or tree.nodes["label"].drop_nulls().unique().sort().to_list())
    english = names.filter(pl.col("kind") == "vernacular")["name"].unique().sort().to_list() or sci
    ids = tree.nodes["node_id"].sort().to_list()
    pick = lambda xs, k: rng.sample(xs, min(k, len(xs)))  # noqa: E731
    def typo(name: str) -> str:  # one letter doubled past the first word's start: nothing starts with it
        i = rng.randrange(min(3, len(name) - 1), len(name))
        return name[:i] + name[i] + name[i:]

    return {"whole scientific name": pick(sci, n), "English name": pick(english, max(1, n // 3)),
            "a typo (nearest names)": [typo(x) for x in pick([x for x in sci if len(x) > 5], max(1, n // 6))],
            "first three letters": [s[:3] for s in pick(sci, n // 2)],
            "one letter": pick(list("abcdefghijklmnoprstuvw"), max(1, n // 6)),
            "node id": pick(ids, max(1, n // 6)),
            "typed one key at a time": pick(sci, max(1, n // 12))}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _serve(root: Path):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def _stats(xs: list[float]) -> dict:
    if not xs:
        return {"n": 0}
    xs = sorted(xs)
    return {"n": len(xs), "median_ms": round(statistics.median(xs), 1),
            "p95_ms": round(xs[min(len(xs) - 1, int(0.95 * len(xs)))], 1), "max_ms": round(xs[-1], 1)}


def _measure_page(page, url: str, queries: dict[str, list[str]], loads: int) -> dict:
    load = []
    for _ in range(loads):
        page.navigate(url)
        load.append(page.evaluate(LOAD_JS))
    out = {"first_paint": _stats([x["first_paint_ms"] for x in load if x["first_paint_ms"] is not None]),
           "ready": _stats([x["ready_ms"] for x in load]), "bytes_at_load": load[-1]["bytes"], "search": {}}
    cold, warm = [], []
    for kind, qs in queries.items():
        times = []
        for q in qs:
            typed = [q[:i] for i in range(1, len(q) + 1)] if kind == "typed one key at a time" else [q]
            for text in typed:
                r = page.evaluate(SEARCH_JS + f"({json.dumps(text)})")
                times.append(r["ms"])
                (cold if r["cold"] else warm).append(r["ms"])
        out["search"][kind] = _stats(times)
    out["search"]["all, cold (a file fetched)"] = _stats(cold)
    out["search"]["all, warm"] = _stats(warm)
    out["search"]["all"] = _stats(cold + warm)
    return out


def run(size: str = "small", screens: str | None = None) -> dict:
    """Build, publish and serve the store; measure the browser and the baseline in Chromium.

    Parameters
    ----------
    size : str, optional
        ``tiny``, ``small`` or ``full`` (:data:`SIZES`).
    screens : str, optional
        A folder for screenshots of the catalogue and the browser.

    Returns
    -------
    dict
        Timings, sizes, the machine's load.
    """
    import polars as pl

    from taxoforge.snapshots import SnapshotStore
    from taxoforge.snapshots.browser import browser_path, write_browser
    from taxoforge.snapshots.browser_index import name_key
    from tests.chromium import DevTools, find_chromium

    exe = find_chromium()
    if exe is None:
        raise RuntimeError("chromium is not installed (scripts/install-system-deps.sh installs it)")
    cfg = SIZES[size]
    result: dict = {"size": size, "load_before": os.getloadavg()}
    t0 = time.perf_counter()
    new, old = _trees(cfg["scale"])
    result["input"] = {"nodes": new.nodes.height, "names": new.names.height, "build_s": round(time.perf_counter() - t0, 1)}
    tmp = Path(tempfile.mkdtemp(prefix="taxoforge-bench-browser-"))
    try:
        store = SnapshotStore(tmp / "store", public_url="https://taxa.example.org/snapshots")
        a = store.publish(old, name=new.name, created="2024-01-01T00:00:00Z", check=False, browser=False)
        b = store.publish(new, name=new.name, created="2024-02-01T00:00:00Z", check=False, browser=False, latest=True)
        t1 = time.perf_counter()
        mark = write_browser(store, b.ref, new)
        changes = tmp / "store" / new.name / b.version / "browse" / "changes.html"
        result["browser"] = {"write_s": round(time.perf_counter() - t1, 1), "files": mark["files"],
                             "bytes": mark["bytes"], "compared_with": mark["diff_from"],
                             "changes_page_bytes": changes.stat().st_size if changes.exists() else None}
        write_browser(store, a.ref, old)
        # the baseline: every name in one file
        base = tmp / "store" / "baseline"
        base.mkdir()
        every = pl.concat([new.names.select("node_id", "name"), new.nodes.select("node_id", pl.col("label").alias("name"))])
        rows = [[name_key(n), n, i] for i, n in every.unique(maintain_order=True).drop_nulls().iter_rows()]
        (base / "names.json.gz").write_bytes(gzip.compress(json.dumps(rows, separators=(",", ":")).encode(), 6))
        (base / "index.html").write_text(BASELINE_PAGE)
        result["baseline_bytes"] = (base / "names.json.gz").stat().st_size
        del rows
        queries = _queries(new, cfg["queries"])
        result["queries"] = {k: len(v) for k, v in queries.items()}
        srv, url = _serve(tmp / "store")
        try:
            with DevTools(exe) as page:
                result["candidate"] = _measure_page(page, f"{url}/{browser_path(new.name, b.version)}", queries,
                                                    cfg["loads"])
                if screens:
                    _screenshots(page, url, new, b, Path(screens), queries)
                result["baseline"] = _measure_page(page, f"{url}/baseline/index.html", queries, cfg["loads"])
        finally:
            srv.shutdown()
            srv.server_close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c, bl = result["candidate"], result["baseline"]
    result["ratios"] = {"ready": round(bl["ready"]["median_ms"] / c["ready"]["median_ms"], 1),
                        "search_all_median": round(bl["search"]["all"]["median_ms"] / c["search"]["all"]["median_ms"], 1)}
    result["targets"] = {"first_paint_le_1000_ms": c["first_paint"]["max_ms"] <= 1000,
                         "search_le_200_ms": c["search"]["all"]["max_ms"] <= 200}
    result["load_after"] = os.getloadavg()
    return result


def _screenshots(page, url: str, tree, published, out: Path, queries: dict) -> None:
    """The catalogue, the browser with a search, and a node with its changes, as PNGs."""
    out.mkdir(parents=True, exist_ok=True)
    page.navigate(f"{url}/index.html")
    page.screenshot(out / "browser-catalogue.png")
    page.navigate(f"{url}/{tree.name}/{published.version}/browse/index.html")
    page.evaluate(LOAD_JS)
    page.evaluate(SEARCH_JS + f"({json.dumps(queries['English name'][0])})")
    page.screenshot(out / "browser-search.png")
    q = queries["whole scientific name"][0]
    page.evaluate(SEARCH_JS + f"({json.dumps(q)})")
    page.evaluate("document.querySelector('#results a').click()")
    page.evaluate("new Promise(r => setTimeout(r, 500))")
    page.screenshot(out / "browser-node.png")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="small")
    p.add_argument("--screens", default=None, help="write PNGs of the catalogue and the browser here")
    a = p.parse_args(argv)
    print(json.dumps(run(a.size, a.screens), indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
