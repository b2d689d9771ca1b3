"""``taxoforge list | pull | verify | show | diff | publish | cite | browse``: the snapshot commands.

Every command takes ``--json`` (one JSON document on stdout, for scripts; errors too, as
``{"error": …, "exit_code": …}``) and ``--help``. Exit codes:

====  =============================================================
0     success (``diff``: also when the versions differ, unless ``--exit-code``)
1     other error; ``diff --exit-code``: the versions differ
2     bad usage (unknown option, missing argument)
3     not found: no such store, taxonomy or version
4     verification failed: a checksum, size or content hash does not match
5     conflict: that version is published with other content
6     the store is read-only (HTTP)
7     tree checks failed: not published
8     download interrupted (run the same ``pull`` again to resume)
9     the store's lock is held by another publisher for too long
11    a local file could not be written or read: no space left on the device, a file
      where a folder goes, no permission (the message names the path)
====  =============================================================
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from taxoforge.cli_output import emit_json, handle_errors

from taxoforge.snapshots.errors import SnapshotError
from taxoforge.snapshots.manifest import MANIFEST_NAME

EXIT_CODES = __doc__.split("Exit codes:", 1)[1]

STORE_HELP = ("Snapshot store: a folder, file://, http(s):// (read only) or any fsspec URL. "
              "Default: $TAXOFORGE_STORE, else ~/.local/share/taxoforge/snapshots.")
_EPILOG = ("Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 verification failed, 5 conflict, "
           "6 read-only store, 7 tree checks failed, 8 download interrupted, 9 lock timeout, "
           "11 a local file could not be written (no space left, a file where a folder goes …).")


def _store_option(f):
    return click.option("--store", "store", envvar=["TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE"], default=None, show_envvar=True,
                        metavar="URL", help=STORE_HELP)(f)


def _json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")(f)


def _emit(obj, as_json: bool, text: str | None = None) -> None:
    if as_json:
        emit_json(obj)
    elif text is not None:
        click.echo(text)


#: snapshot and download errors end with their exit code (module docstring), never a traceback
_handle_errors = handle_errors()


def _store(url):
    from taxoforge.snapshots.store import SnapshotStore

    return SnapshotStore(url)


def _human_size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _load(target: str, store_url: str | None, cache: str | None = None):
    """A snapshot given as a folder (with manifest.json) or NAME[@VERSION] in the store."""
    from taxoforge.snapshots.load import load_taxonomy
    from taxoforge.snapshots.verify import read_snapshot

    if _is_folder(target):
        return read_snapshot(target)
    return load_taxonomy(target, store=store_url, cache=cache)


def _is_folder(target: str) -> bool:
    """A folder when it holds a manifest, or is spelt as a path (has a separator)."""
    p = Path(target)
    return p.is_dir() and ((p / MANIFEST_NAME).exists() or os.sep in target or "/" in target)


# ---- list ------------------------------------------------------------------------------
@click.command("list", epilog=_EPILOG)
@click.argument("name", required=False)
@_store_option
@_json_option
@_handle_errors
def list_cmd(name: str | None, store: str | None, as_json: bool) -> None:
    """List the taxonomies and versions in a store (all, or only NAME's), oldest first;
    the latest version of each (what a bare NAME means) is marked with *."""
    from taxoforge.snapshots.catalogue import describe_entry, describe_taxonomies, latest_version, sorted_versions
    from taxoforge.snapshots.errors import SnapshotNotFound

    st = _store(store)
    st.require_exists()
    idx = st.index()
    names = [name] if name else sorted(idx["taxonomies"])
    rows = []
    for n in names:
        tax = idx["taxonomies"].get(n) or {"versions": []}
        entries = sorted_versions(tax["versions"])
        if name and not entries:
            raise SnapshotNotFound(f"store {st.url}: no taxonomy {n!r} (taxonomies: {describe_taxonomies(idx)})")
        latest = latest_version(tax)
        for e in entries:
            rows.append(describe_entry(n, e, latest=e["version"] == latest))
    if as_json:
        _emit({"store": st.url, "snapshots": rows}, True)
        return
    if not rows:
        click.echo(f"{st.url}: no snapshots")
        return
    w = max(len(r["ref"]) for r in rows)
    click.echo(f"  {'SNAPSHOT':<{w}}  {'CREATED':<20}  {'NODES':>9}  {'SIZE':>10}")
    for r in rows:
        click.echo(f"{'*' if r['latest'] else ' '} {r['ref']:<{w}}  {r['created'] or '':<20}  "
                   f"{r['row_counts'].get('nodes', 0):>9}  {_human_size(r['size']):>10}")


# ---- pull ------------------------------------------------------------------------------
@click.command("pull", epilog=_EPILOG)
@click.argument("ref", metavar="NAME[@VERSION]")
@click.option("--store", "store", envvar="TAXOFORGE_SNAPSHOT_REMOTE", default=None, show_envvar=True, metavar="URL",
              help="Store to pull from (default: $TAXOFORGE_SNAPSHOT_REMOTE, else the local store).")
@click.option("--dest", envvar=["TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE"], default=None, show_envvar=True, metavar="DIR",
              help="Local store to pull into (default: $TAXOFORGE_STORE, else ~/.local/share/taxoforge/snapshots).")
@click.option("--retries", type=click.IntRange(0, 100), default=3, show_default=True,
              help="Resume a dropped connection this many times before giving up.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@click.option("--allow-redirects-to-other-hosts", "allow_other_hosts", is_flag=True,
              help="Follow the store's redirects to another host (refused by default: the store named is the one "
                   "trusted).")
@_json_option
@_handle_errors
def pull_cmd(ref: str, store: str | None, dest: str | None, retries: int, progress: bool, allow_other_hosts: bool,
             as_json: bool) -> None:
    """Download NAME[@VERSION] (latest by default) into the local store, verifying the
    SHA-256 of every file; an interrupted download resumes where it stopped, a corrupted
    file is deleted and the snapshot refused. Nothing beyond the manifest's sizes is
    written, a stalled or trickling server is cut at its deadline, and a snapshot that does
    not fit on the disk is refused before anything is downloaded."""
    from taxoforge.snapshots.pull import pull

    res = pull(ref, store=store, dest=dest, progress=progress, retries=retries, allow_other_hosts=allow_other_hosts)
    text = (f"{res.ref}: {'already present and verified' if res.status == 'present' else 'pulled and verified'}"
            f" → {res.path}" + (f" ({_human_size(res.bytes_downloaded)} downloaded"
                                 + (f", resumed {', '.join(res.resumed)}" if res.resumed else "") + ")"
                                 if res.status == "pulled" else ""))
    _emit(res.as_dict(), as_json, text)


# ---- verify ----------------------------------------------------------------------------
@click.command("verify", epilog=_EPILOG)
@click.argument("target", metavar="FOLDER|NAME[@VERSION]")
@_store_option
@click.option("--fast", is_flag=True, help="Check sizes and SHA-256 only, not the recomputed content hash.")
@_json_option
@_handle_errors
def verify_cmd(target: str, store: str | None, fast: bool, as_json: bool) -> None:
    """Check a snapshot where it lies (a folder, or NAME[@VERSION] in any store: local,
    HTTP, S3 …) against its manifest, and the manifest against the store's index: every
    file's size and SHA-256 and, unless --fast, the content hash recomputed from the
    tables. Remote files are read, never written. Exit code 4 when anything differs."""
    from taxoforge.snapshots.errors import ChecksumMismatch
    from taxoforge.snapshots.verify import verify_folder

    if _is_folder(target):
        folder = Path(target)
        rep = verify_folder(folder, deep=not fast)
    else:
        rep = _store(store).verify(target, deep=not fast)
        folder = rep.path
    if as_json:
        _emit(rep.as_dict(), True)
    elif rep.ok:
        click.echo(f"{rep.as_dict()['ref']}: OK ({', '.join(rep.checked)})")
    else:
        click.echo(f"{folder}: FAILED", err=True)
        for pr in rep.problems:
            click.echo(f"  {pr}", err=True)
    if not rep.ok:
        sys.exit(ChecksumMismatch.exit_code)


# ---- show ------------------------------------------------------------------------------
@click.command("show", epilog=_EPILOG)
@click.argument("target", metavar="FOLDER|NAME[@VERSION]")
@_store_option
@click.option("--dest", default=None, metavar="DIR",
              help="Local store that snapshots of a remote --store are pulled into (default: $TAXOFORGE_STORE, else ~/.local/share/taxoforge/snapshots).")
@_json_option
@_handle_errors
def show_cmd(target: str, store: str | None, dest: str | None, as_json: bool) -> None:
    """Print a snapshot's manifest and a summary: nodes, leaves, depth histogram, names,
    links by dataset and status, report rows by kind. Remote snapshots are pulled into the
    local store first."""
    from taxoforge.snapshots.verify import summarise

    tables = _load(target, store, dest)
    m = tables.info["manifest"]
    s = summarise(tables)
    if as_json:
        _emit({"manifest": m, "summary": s}, True)
        return
    cv = m.get("code_version") or {}
    lines = [
        f"{m['taxonomy']}@{m['version']}",
        f"  created         {m['created']}",
        f"  content sha256  {m['content_sha256']}",
        f"  schema version  {m['schema_version']}",
        f"  seed            {m.get('seed')}",
        f"  code version    taxoforge {cv.get('package')}"
        + (f", git {cv['git_commit'][:12]}{' (dirty)' if cv.get('git_dirty') else ''}" if cv.get("git_commit") else ""),
        "  source versions " + (json.dumps(m.get("source_versions"), sort_keys=True, default=str)
                                if m.get("source_versions") else "(none recorded)"),
        "  files",
    ]
    for fname, meta in sorted(m["files"].items()):
        lines.append(f"    {fname:<16} {_human_size(meta.get('size')):>10}  sha256 {meta['sha256']}")
    lines.append(f"  nodes           {s['nodes']} ({s['leaves']} leaves, root {', '.join(s['roots'])}, "
                 f"max depth {s['max_depth']})")
    lines.append("  depths          " + " ".join(f"{d}:{n}" for d, n in s["depth_histogram"].items()))
    lines.append(f"  names           {s['names']}")
    for ds, counts in s["links"].items():
        lines.append(f"  links           {ds}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if s["report"]:
        lines.append("  report          " + ", ".join(f"{k} {v}" for k, v in s["report"].items()))
    click.echo("\n".join(lines))


# ---- diff ------------------------------------------------------------------------------
@click.command("diff", epilog=_EPILOG)
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@_store_option
@click.option("--dest", default=None, metavar="DIR",
              help="Local store that snapshots of a remote --store are pulled into (default: $TAXOFORGE_STORE, else ~/.local/share/taxoforge/snapshots).")
@click.option("--limit", type=click.IntRange(0), default=20, show_default=True,
              help="Rows shown per kind of change (text output; --json lists all).")
@click.option("--exit-code", "exit_code", is_flag=True, help="Exit with 1 when A and B differ (like git diff).")
@_json_option
@_handle_errors
def diff_cmd(a: str, b: str, store: str | None, dest: str | None, limit: int, exit_code: bool,
             as_json: bool) -> None:
    """Show what changed from snapshot A to snapshot B: nodes added, removed, renamed,
    moved to a new parent; names and links added, removed or changed. A and B are folders
    or NAME@VERSION in the store; B may be just @VERSION (same name as A)."""
    from taxoforge.snapshots.diff import diff_tables, format_diff

    if b.startswith("@") and "@" in a and not _is_folder(a):
        b = a.split("@", 1)[0] + b
    d = diff_tables(_load(a, store, dest), _load(b, store, dest))
    _emit(d, as_json, format_diff(d, limit=limit))
    if exit_code and not d["identical"]:
        sys.exit(1)


# ---- publish ---------------------------------------------------------------------------
def _parse_kv(values: tuple[str, ...]) -> dict:
    out = {}
    for v in values:
        k, sep, val = v.partition("=")
        if not sep or not k:
            raise click.BadParameter(f"{v!r}: expected KEY=VALUE", param_hint="--source-version")
        out[k] = val
    return out


@click.command("publish", epilog=_EPILOG)
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--name", help="Taxonomy name (default: the folder's name, or the manifest's).")
@_store_option
@click.option("--seed", type=int, default=None, help="Seed the tree was built with (recorded in the manifest).")
@click.option("--source-version", "source_versions", multiple=True, metavar="KEY=VALUE",
              help="A source version to record (repeatable), e.g. wordnet=3.0 dump=2024-06-01.")
@click.option("--version", "version_label", default=None, metavar="LABEL",
              help="Publish under this label instead of the content-derived id.")
@click.option("--min-link-coverage", type=click.FloatRange(0, 1), default=None,
              help="Also refuse when a dataset has a smaller share of linked labels.")
@click.option("--skip-checks", is_flag=True, help="Publish even if the tree checks fail (not recommended).")
@click.option("--latest", is_flag=True,
              help="Make this version what the bare NAME means (also for a version already published). "
                   "Without it the latest stays where it was, except for a taxonomy's first version.")
@click.option("--browser/--no-browser", default=True, show_default=True,
              help="Write the version's browser (NAME/VERSION/browse/index.html: search, path, children, links, "
                   "changes), which the catalogue links.")
@click.option("--public-url", default=None, metavar="URL", envvar="TAXOFORGE_SNAPSHOT_PUBLIC_URL", show_envvar=True,
              help="Where users reach this store (e.g. the HTTPS address it is served at). The store records it: "
                   "its index.html, its browsers and every citation of its snapshots (taxoforge cite, score "
                   "results) name it; without one a local store is cited as local-only.")
@_json_option
@_handle_errors
def publish_cmd(folder: Path, name: str | None, store: str | None, seed: int | None,
                source_versions: tuple[str, ...], version_label: str | None, min_link_coverage: float | None,
                skip_checks: bool, latest: bool, browser: bool, public_url: str | None, as_json: bool) -> None:
    """Publish FOLDER into the store. FOLDER holds the tree tables (nodes.parquet, …, e.g.
    data/assets/wordnet_tree, with the info.json that records its seed, cycle policy and
    source versions) or is a snapshot with its manifest.json, which is verified and copied
    as is. The tree checks run first: a broken tree is refused (exit code 7). Publishing a
    version that is already there is a no-op when its content is the same, exit code 5
    otherwise. The store's index.json and index.html are rewritten."""
    from taxoforge.snapshots.checks import require_publishable
    from taxoforge.snapshots.errors import ChecksumMismatch
    from taxoforge.snapshots.verify import read_snapshot, verify_folder
    from taxoforge.trees.tables import TreeTables

    from taxoforge.snapshots.store import SnapshotStore

    st = SnapshotStore(store, public_url=public_url)
    checks = []
    if (folder / MANIFEST_NAME).exists():
        rep = verify_folder(folder)
        if not rep.ok:
            raise ChecksumMismatch(f"{folder}: " + "; ".join(rep.problems))
        if not skip_checks:
            checks = require_publishable(read_snapshot(folder), min_link_coverage=min_link_coverage)
        res = st.install(folder, latest=latest)
        if browser:
            from taxoforge.snapshots.browser import publish_browser

            publish_browser(st, res)
    else:
        try:
            tables = TreeTables.read(folder, name=name or folder.name)  # with its info.json
        except (FileNotFoundError, ValueError) as e:
            raise SnapshotError(str(e)) from e
        sv = dict(tables.info.get("source_versions") or {})
        sv.update(_parse_kv(source_versions))
        if not skip_checks:
            checks = require_publishable(tables, min_link_coverage=min_link_coverage)
        res = st.publish(tables, seed=seed, source_versions=sv, version=version_label, check=False, latest=latest,
                         browser=browser)
    out = res.as_dict()
    out["store"] = st.url
    out["checks"] = [c.as_dict() for c in checks]
    out["latest"] = st.latest(res.taxonomy)
    verb = "published" if res.status == "published" else "already published (identical)"
    where = (f"; {res.taxonomy} means this version" if out["latest"] == res.version else
             f"; {res.taxonomy} still means {res.taxonomy}@{out['latest']} (--latest to change that)")
    _emit(out, as_json, f"{res.ref}: {verb} → {res.location}{where}")


# ---- browse -----------------------------------------------------------------------------
@click.command("browse", epilog=_EPILOG)
@click.argument("ref", metavar="[NAME[@VERSION]]", required=False)
@_store_option
@click.option("--rebuild", is_flag=True, help="Write the browser again even when the version has an up-to-date one.")
@_json_option
@_handle_errors
def browse_cmd(ref: str | None, store: str | None, rebuild: bool, as_json: bool) -> None:
    """Write the browser of snapshot NAME[@VERSION] of the store (without REF: of every
    version that has none, or whose one compares with another version than the one before
    it): a static page, NAME/VERSION/browse/index.html, to search any name or id and see its
    path to the root, children with subtree sizes, depth, links out and what changed since
    the version before. Serve the store over HTTP to open it."""
    from taxoforge.snapshots.browser import browser_path, write_browser
    from taxoforge.snapshots.catalogue import sorted_versions

    st = _store(store)
    st.require_exists()
    idx = st.index()
    if ref:
        name, entry = st.resolve(ref)
        todo = [(name, entry["version"])]
    else:
        todo = []
        for name, tax in sorted(idx["taxonomies"].items()):
            versions = sorted_versions(tax.get("versions", []))
            for i, e in enumerate(versions):
                prev = versions[i - 1]["version"] if i else None
                if rebuild or not e.get("browser") or e["browser"].get("diff_from") != prev:
                    todo.append((name, e["version"]))
    done = []
    for name, version in todo:
        mark = write_browser(st, f"{name}@{version}")
        done.append({"ref": f"{name}@{version}", "page": st.location(browser_path(name, version)), **mark})
        if not as_json:
            click.echo(f"{name}@{version}: browser written → {st.location(browser_path(name, version))} "
                       f"({mark['files']:,} files, {_human_size(mark['bytes'])}"
                       + (f", compared with {mark['diff_from']})" if mark["diff_from"] else ")"))
    if as_json:
        _emit({"store": st.url, "browsers": done}, True)
    elif not done:
        click.echo(f"{st.url}: every version has an up-to-date browser (--rebuild to write them again)")


# ---- cite ------------------------------------------------------------------------------
@click.command("cite", epilog=_EPILOG)
@click.argument("ref", metavar="NAME[@VERSION]")
@_store_option
@click.option("--format", "fmt", type=click.Choice(["both", "bibtex", "cff"]), default="both", show_default=True,
              help="BibTeX, CITATION.cff (Citation File Format 1.2.0), or both one after the other.")
@click.option("--author", "authors", multiple=True, metavar="'FAMILY, GIVEN'",
              help="An author of the snapshot (repeatable); default the organisations that made its data.")
@_json_option
@_handle_errors
def cite_cmd(ref: str, store: str | None, fmt: str, authors: tuple[str, ...], as_json: bool) -> None:
    """Print how a paper cites snapshot NAME[@VERSION] of the store: BibTeX and CFF with
    the store's public URL, the snapshot's content hash, and every upstream source it was
    built from (Wikidata, Catalogue of Life, iNaturalist, iNat21, WordNet, ImageNet) with
    that source's own citation and licence. A local store without a public URL is cited
    as such (publish with --public-url to give it one). Only index.json is read."""
    from taxoforge.snapshots.bibliography import bibtex, cff, cite_snapshot
    from taxoforge.snapshots.upstreams import upstreams_of

    r = cite_snapshot(ref, _store(store))
    names = list(authors) or None
    bib, cit = bibtex(r, names), cff(r, names)
    if as_json:
        _emit({"ref": r.ref, "store": r.store, "local_only": r.local_only, "url": r.url,
               "content_sha256": r.content_sha256, "bibtex": bib, "cff": cit,
               "sources": [{"source": u.key, "name": u.name, "licence": u.licence, "licence_url": u.licence_url,
                            "spdx": u.spdx, "versions": dict(v)} for u, v in upstreams_of(r.source_versions)]}, True)
        return
    if r.local_only:
        click.echo(f"warning: {r.ref} is in a local store with no public URL; readers cannot pull it "
                   "(publish it with --public-url URL, or to a public store)", err=True)
    parts = {"bibtex": [bib], "cff": [cit], "both": [bib, "% ---- CITATION.cff " + "-" * 50 + "\n" + cit]}[fmt]
    click.echo("\n".join(parts), nl=False)


__all__ = ["list_cmd", "pull_cmd", "verify_cmd", "show_cmd", "diff_cmd", "publish_cmd", "cite_cmd", "browse_cmd",
           "EXIT_CODES"]
