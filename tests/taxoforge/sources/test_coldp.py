"""ColDP reader: the three real datasets in ../shared/data/coldp, both flavours, CSV/TSV,
zip archives (and their path-escape attacks), bad rows, and resumable checksummed downloads
from a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import csv
import importlib.util
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from taxoforge.links.resolve import resolve_labels
from taxoforge.sources.coldp import (
    ColdpError,
    coldp_names,
    coldp_synonyms,
    coldp_tree,
    coldp_version,
    read_coldp,
)
from taxoforge.sources.ranked import ranked_tree_facts, rank_counts
from tests.conftest import shared_file

_spec = importlib.util.spec_from_file_location("_tf_httpfixture", Path(__file__).with_name("httpfixture.py"))
httpfixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(httpfixture)


def _csv_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- Pterophoroidea


@pytest.fixture(scope="module")
def ptero_dir() -> Path:
    return shared_file("coldp", "pterophoroidea_world_catalogue")


@pytest.fixture(scope="module")
def ptero(ptero_dir):
    return coldp_tree(ptero_dir, name="pterophoroidea")


def test_pterophoroidea_counts_per_rank_match_the_raw_files(ptero, ptero_dir):
    taxa = _csv_rows(ptero_dir / "taxon.csv")
    names = {r["ID"]: r for r in _csv_rows(ptero_dir / "name.csv")}
    expected = Counter(names[t["nameID"]]["rank"] for t in taxa)
    assert rank_counts(ptero.nodes) == dict(expected)
    # the figures PROVENANCE.md gives for this dataset
    assert ptero.nodes.height == 1712
    assert expected["species"] == 1604 and expected["genus"] == 91


def test_pterophoroidea_is_one_tree_without_orphans(ptero, ptero_dir):
    c = ranked_tree_facts(ptero.nodes)
    assert c["roots"] == 1 and c["orphans"] == 0
    assert c["species_not_under_genus"] == 0
    root = ptero.nodes.filter(pl.col("parent_id").is_null())
    assert root["label"].to_list() == ["Animalia"] and root["node_id"][0] == "col:1"
    # every parentID of the file is kept as the tree edge (it is already a tree)
    raw = {("col:" + t["ID"], "col:" + t["parentID"]) for t in _csv_rows(ptero_dir / "taxon.csv") if t["parentID"]}
    got = set(ptero.nodes.filter(pl.col("parent_id").is_not_null()).select("node_id", "parent_id").iter_rows())
    assert got == raw
    assert ptero.nodes.filter(pl.col("rank") == "species")["is_leaf"].all()


def test_pterophoroidea_synonyms_are_attached_to_their_accepted_taxon(ptero, ptero_dir):
    names = {r["ID"]: r["scientificName"] for r in _csv_rows(ptero_dir / "name.csv")}
    syn = _csv_rows(ptero_dir / "synonym.csv")
    want_syn = {("col:" + s["taxonID"], names[s["nameID"]]) for s in syn if s["status"] != "misapplied"}
    want_mis = {("col:" + s["taxonID"], names[s["nameID"]]) for s in syn if s["status"] == "misapplied"}
    got = ptero.names
    got_syn = set(got.filter(pl.col("kind") == "synonym").select("node_id", "name").iter_rows())
    got_mis = set(got.filter(pl.col("kind") == "misapplied").select("node_id", "name").iter_rows())
    assert got_syn == want_syn and len(want_syn) > 1000
    assert got_mis == want_mis and len(want_mis) == 11
    assert set(got.filter(pl.col("kind") == "synonym")["lang"].unique()) == {"la"}
    # each accepted taxon has exactly one scientific name: its label
    sci = got.filter(pl.col("kind") == "scientific")
    assert sci.height == ptero.nodes.height
    assert sci.join(ptero.nodes, on="node_id").filter(pl.col("name") != pl.col("label")).height == 0


def test_pterophoroidea_synonym_labels_link_to_accepted(ptero, ptero_dir):
    names = {r["ID"]: r["scientificName"] for r in _csv_rows(ptero_dir / "name.csv")}
    sci = set(names[t["nameID"]] for t in _csv_rows(ptero_dir / "taxon.csv"))
    syn = [s for s in _csv_rows(ptero_dir / "synonym.csv") if s["status"] == "synonym"
           and names[s["nameID"]] not in sci and " " in names[s["nameID"]]]
    by_name = Counter(names[s["nameID"]] for s in syn)
    pick = [s for s in syn if by_name[names[s["nameID"]]] == 1][:25]
    labels = pl.DataFrame({"dataset": "ptero", "label_id": [s["nameID"] for s in pick],
                           "label_text": [names[s["nameID"]].upper() for s in pick]})
    links = resolve_labels(labels, ptero.names, ptero.nodes)
    want = {s["nameID"]: "col:" + s["taxonID"] for s in pick}
    assert dict(links.select("label_id", "node_id").iter_rows()) == want
    assert set(links["method"]) == {"synonym"}


# --------------------------------------------------------------------------- spec example


@pytest.fixture(scope="module")
def spec_dir() -> Path:
    return shared_file("coldp", "coldp_spec_example")


def test_spec_example_edge_cases(spec_dir):
    t = coldp_tree(spec_dir)
    n = {r["node_id"]: r for r in t.nodes.iter_rows(named=True)}
    assert t.nodes.height == 23
    assert rank_counts(t.nodes) == {"species": 10, "genus": 4, "subspecies": 3, "tribe": 2, "family": 1,
                                    "forma": 1, "kingdom": 1, "subfamily": 1}
    c = ranked_tree_facts(t.nodes)
    assert c["roots"] == 1 and c["orphans"] == 0
    # the hybrid "species" sits directly under the kingdom: the species check names it
    assert c["species_not_under_genus"] == 1 and c["species_examples"] == [
        "Quercus robur x Q. macrocarpa (col:hybrid, species) under Plantae (kingdom)"]
    # provisional taxon kept, with its rank and hybrid-marked name
    assert n["col:fake"]["rank"] == "forma" and n["col:fake"]["parent_id"] == "col:1"
    assert "×" in n["col:fake"]["label"]
    # subspecies below their species
    assert {k for k, v in n.items() if v["parent_id"] == "col:1001"} == {"col:1001a", "col:1001b", "col:1001c"}
    # two treatment taxa reuse name 1011: three accepted taxa with one name
    assert sorted(k for k, v in n.items() if v["label"] == "Gundelia tournefortii") == [
        "col:1011", "col:Hind2013", "col:Jarvis2007"]
    # synonyms (including the basionym-derived Leonida) attach to 1006; vernaculars carry BCP-47
    syn = t.names.filter(pl.col("kind") == "synonym")
    assert sorted(syn.filter(pl.col("node_id") == "col:1006")["name"]) == [
        "Leonida taraxacoida", "Leontodon leysseri", "Leontodon saxatilis"]
    assert set(syn.select("node_id", "name").iter_rows()) >= {("col:1", "Viridae"), ("col:10", "Compositae")}
    vern = t.names.filter(pl.col("kind") == "vernacular")
    assert set(vern.select("node_id", "name", "lang").iter_rows()) == {
        ("col:1001", "Baker's hawksbeard", "en"), ("col:hybrid", "Heritage® Hybrid Oak", "en")}
    # names with no taxon (virus, cultivar) are not nodes
    assert not t.nodes.filter(pl.col("label").str.contains("virus|Sapphire")).height


def test_spec_example_as_csv_with_other_file_names_and_col_prefix(spec_dir, tmp_path):
    """The same archive as CSV, with CamelCase / upper-case file names and col: headers."""
    renames = {"taxon.tsv": "Taxon.csv", "name.tsv": "NAME.csv", "synonym.tsv": "Synonym.csv",
               "vernacular-name.tsv": "VernacularName.csv"}
    for src, dst in renames.items():
        df = pl.read_csv(spec_dir / src, separator="\t", infer_schema=False, quote_char=None)
        df.rename({c: f"col:{c}" for c in df.columns}).write_csv(tmp_path / dst)
    a, b = coldp_tree(spec_dir), coldp_tree(tmp_path)
    assert a.nodes.equals(b.nodes) and a.names.equals(b.names)


def test_spec_example_names_keyed_by_accepted_taxon(spec_dir):
    """Every non-accepted name with its accepted taxon's name, rank and kingdom, as the tree
    holds them (the tree's synonym/vernacular rows, one for one)."""
    n = coldp_names(spec_dir)
    t = coldp_tree(spec_dir)
    assert n.height == t.names.filter(pl.col("kind") != "scientific").height
    rows = set(n.select("accepted_name", "accepted_rank", "accepted_kingdom", "name", "kind", "lang").iter_rows())
    assert {("Leontodon taraxacoides", "species", "Plantae", "Leontodon saxatilis", "synonym", "la"),
            ("Asteraceae", "family", "Plantae", "Compositae", "synonym", "la"),
            ("Crepis bakeri", "species", "Plantae", "Baker's hawksbeard", "vernacular", "en")} <= rows
    # the kingdom itself is its own kingdom
    assert ("Plantae", "kingdom", "Plantae", "Viridae", "synonym", "la") in rows
    labels = dict(t.nodes.select("node_id", "label").iter_rows())
    assert all(labels[i] == a for i, a in n.select("accepted_id", "accepted_name").iter_rows())
    assert coldp_names(read_coldp(spec_dir)).equals(n)  # the tables already read work too


def test_coldp_version_from_metadata(tmp_path):
    ptero = shared_file("coldp", "pterophoroidea_world_catalogue")
    v = coldp_version(ptero)
    assert v["version"] == "1.1.25.304" and v["issued"] == "2025-10-31" and v["path"] == str(ptero)
    assert v["title"].startswith("Catalogue of the Pterophoroidea")
    z = tmp_path / "p.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(ptero / "metadata.yaml", "dataset/metadata.yaml")
    assert coldp_version(z)["version"] == "1.1.25.304" and coldp_version(z)["bytes"] == z.stat().st_size
    assert coldp_version(shared_file("coldp", "coldp_spec_example")) == {
        "path": str(shared_file("coldp", "coldp_spec_example"))}  # no metadata.yaml


# --------------------------------------------------------------------------- NameUsage flavour


def test_nameusage_flavour_with_col_prefixes():
    t = coldp_tree(shared_file("coldp", "coldp_pypi_test_Tonzidae"))
    assert read_coldp(shared_file("coldp", "coldp_pypi_test_Tonzidae")).info["flavour"] == "nameusage"
    assert rank_counts(t.nodes) == {"species": 3, "family": 1, "genus": 1}
    c = ranked_tree_facts(t.nodes)
    assert c["roots"] == 1 and c["orphans"] == 0 and c["species_not_under_genus"] == 0
    assert t.nodes.filter(pl.col("parent_id").is_null())["label"].to_list() == ["Tonzidae"]
    # Tonzidae's parent 233686 is outside this partial export: reported, not an orphan
    dang = t.report.filter(pl.col("kind") == "dangling_parent")
    assert dang.select("child_id", "parent_id").rows() == [("col:654337", "col:233686")]
    assert sorted(t.nodes.filter(pl.col("parent_id") == "col:254505")["label"]) == [
        "Tonza callicitra", "Tonza citrorrhoa", "Tonza purella"]


def test_nameusage_synonyms_misapplied_and_vernacular(tmp_path):
    (tmp_path / "nameusage.tsv").write_text(
        "col:ID\tcol:parentID\tcol:status\tcol:scientificName\tcol:rank\n"
        "f\t\taccepted\tEsocidae\tfamily\n"
        "g\tf\taccepted\tEsox\tgenus\n"
        "s1\tg\taccepted\tEsox lucius\tspecies\n"
        "s2\tg\tprovisionally accepted\tEsox cisalpinus\tspecies\n"
        "x1\ts1\tsynonym\tEsox estor\tspecies\n"
        "x2\ts2\tambiguous synonym\tEsox flaviae\tspecies\n"
        "x3\ts1\tmisapplied\tEsox reichertii\tspecies\n"
        "x4\tnowhere\tsynonym\tEsox ghost\tspecies\n"
        "b1\t\tbare name\tEsox nudus\tspecies\n")
    (tmp_path / "VernacularName.tsv").write_text("taxonID\tname\tlanguage\ns1\tNorthern pike\teng\ns1\tHecht\tdeu\n")
    t = coldp_tree(tmp_path)
    assert sorted(t.nodes["node_id"]) == ["col:f", "col:g", "col:s1", "col:s2"]
    names = set(t.names.select("node_id", "name", "kind", "lang").iter_rows())
    assert {("col:s1", "Esox estor", "synonym", "la"), ("col:s2", "Esox flaviae", "synonym", "la"),
            ("col:s1", "Esox reichertii", "misapplied", "la"), ("col:s1", "Northern pike", "vernacular", "en"),
            ("col:s1", "Hecht", "vernacular", "de")} <= names
    assert t.report.filter(pl.col("kind") == "dangling_synonym")["child_id"].to_list() == ["col:nowhere"]
    syn = coldp_synonyms(tmp_path)
    assert set(syn.select("name", "accepted_name").iter_rows()) == {("Esox estor", "Esox lucius"),
                                                                    ("Esox flaviae", "Esox cisalpinus")}


# --------------------------------------------------------------------------- zips


def _zip_folder(folder: Path, out: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.iterdir()):
            if p.is_file():
                zf.write(p, prefix + p.name)
    return out


def test_zip_archive_gives_the_same_tree(ptero, ptero_dir, tmp_path):
    z = _zip_folder(ptero_dir, tmp_path / "ptero.zip", prefix="dataset/")
    t = coldp_tree(z, name="pterophoroidea")
    assert t.nodes.equals(ptero.nodes) and t.names.equals(ptero.names)


@pytest.mark.parametrize("member", ["../evil.tsv", "/tmp/evil.tsv", "a/../../evil.tsv", "C:/evil.tsv"])
def test_zip_with_path_escape_is_refused(tmp_path, member):
    z = tmp_path / "bad.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("taxon.tsv", "ID\tparentID\tnameID\n")
        zf.writestr(member, "pwned")
    with pytest.raises(ColdpError, match="refusing the archive"):
        coldp_tree(z)
    assert not (tmp_path / "evil.tsv").exists()


def test_zip_with_symlink_is_refused(tmp_path):
    z = tmp_path / "link.zip"
    with zipfile.ZipFile(z, "w") as zf:
        info = zipfile.ZipInfo("taxon.tsv")
        info.external_attr = (0o120777 << 16)
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(ColdpError, match="symbolic link"):
        coldp_tree(z)


# --------------------------------------------------------------------------- bad input


def _write_split(folder: Path, taxon: str, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "taxon.tsv").write_text(taxon)
    (folder / "name.tsv").write_text(name)
    return folder


NAME_OK = "ID\tscientificName\trank\nn1\tEsox\tgenus\nn2\tEsox lucius\tspecies\n"


def test_extra_field_names_file_and_line(tmp_path):
    d = _write_split(tmp_path / "a", "ID\tparentID\tnameID\nt1\t\tn1\nt2\tt1\tn2\textra\n", NAME_OK)
    with pytest.raises(ColdpError, match=r"taxon\.tsv: line 3: expected 3 fields, found 4"):
        coldp_tree(d)


def test_missing_id_and_unknown_name_name_the_line(tmp_path):
    d = _write_split(tmp_path / "b", "ID\tparentID\tnameID\nt1\t\tn1\n\tt1\tn2\n", NAME_OK)
    with pytest.raises(ColdpError, match=r"taxon\.tsv: line 3: ID is empty"):
        coldp_tree(d)
    d = _write_split(tmp_path / "c", "ID\tparentID\tnameID\nt1\t\tn1\nt2\tt1\tn9\n", NAME_OK)
    with pytest.raises(ColdpError, match=r"taxon\.tsv: line 3: nameID 'n9' is not an ID of name\.tsv"):
        coldp_tree(d)
    d = _write_split(tmp_path / "d", "ID\tparentID\tnameID\nt1\t\tn1\nt1\tt1\tn2\n", NAME_OK)
    with pytest.raises(ColdpError, match=r"line 3: duplicate id 't1' \(first at line 2\)"):
        coldp_tree(d)
    d = _write_split(tmp_path / "e", "ID\tparent\tnameID\nt1\t\tn1\n", NAME_OK)  # parentID optional
    assert coldp_tree(d).nodes.height == 1
    d = _write_split(tmp_path / "f", "Identifier\tnameID\nt1\tn1\n", NAME_OK)
    with pytest.raises(ColdpError, match=r"taxon\.tsv: missing required column\(s\) \['id'\]"):
        coldp_tree(d)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ColdpError, match="no Taxon or NameUsage table"):
        coldp_tree(tmp_path / "empty")


def test_cycle_in_parent_ids_is_broken_and_reported(tmp_path):
    d = _write_split(tmp_path / "cyc", "ID\tparentID\tnameID\nt1\t\tn1\nt2\tt3\tn2\nt3\tt2\tn2\n",
                     NAME_OK)
    t = coldp_tree(d)
    c = ranked_tree_facts(t.nodes)
    assert c["roots"] == 1 and c["orphans"] == 0 and t.nodes.height == 4  # synthetic col:root added
    assert t.report.filter(pl.col("kind") == "cycle_back_edge").height == 1


def test_reader_does_not_touch_the_shared_folder(ptero_dir, tmp_path):
    """Reading is read-only: a copy's files are unchanged byte for byte afterwards."""
    copy = Path(shutil.copytree(ptero_dir, tmp_path / "copy"))
    before = {p.name: p.read_bytes() for p in copy.iterdir()}
    coldp_tree(copy)
    assert {p.name: p.read_bytes() for p in copy.iterdir()} == before


# --------------------------------------------------------------------------- archives, encodings, empty files

TAXON_OK = "ID\tparentID\tnameID\nt1\t\tn1\nt2\tt1\tn2\n"


def _zip(out: Path, members: dict[str, bytes | str]) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out


def _bomb(mib: int) -> bytes:
    """``mib`` MiB of a valid-looking name table that deflates about 500 to 1."""
    row = b"n1\tEsox\tgenus\n"
    return b"ID\tscientificName\trank\n" + row * (mib * 2**20 // len(row))


def test_zip_bomb_attack_in_a_needed_table_is_refused_before_writing(tmp_path):
    """A ~400 KB zip whose name table expands to 200 MiB (ratio ~500) is refused by its
    ratio before a byte is written, naming the archive and member."""
    z = _zip(tmp_path / "bomb.zip", {"taxon.tsv": TAXON_OK, "name.tsv": _bomb(200)})
    assert z.stat().st_size < 500_000
    with pytest.raises(ColdpError, match=r"bomb\.zip: member 'name\.tsv' would expand .*\(ratio \d+, more than max_ratio=100\)"):
        coldp_tree(z)


def test_zip_bomb_attack_in_an_unneeded_member_is_never_extracted(tmp_path, monkeypatch):
    """Only the members the reader needs are extracted: a bomb among the other tables of
    the package (here Distribution) is never opened, and the tree is built."""
    z = _zip(tmp_path / "pkg.zip", {"data/taxon.tsv": TAXON_OK, "data/name.tsv": NAME_OK,
                                    "data/distribution.tsv": _bomb(200), "data/metadata.yaml": "title: t\n"})
    opened = []
    real_open = zipfile.ZipFile.open

    def spy(self, name, *a, **kw):
        opened.append(getattr(name, "filename", name))
        return real_open(self, name, *a, **kw)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    t = coldp_tree(z)
    assert t.nodes.height == 2
    assert sorted(opened) == ["data/metadata.yaml", "data/name.tsv", "data/taxon.tsv"]


def test_zip_total_size_limit(tmp_path):
    z = _zip(tmp_path / "big.zip", {"taxon.tsv": TAXON_OK, "name.tsv": NAME_OK})
    with pytest.raises(ColdpError, match=r"big\.zip: the members to extract hold \d+ bytes, more than "
                                         r"max_extract_bytes=40"):
        read_coldp(z, max_extract_bytes=40)
    assert read_coldp(z).taxa.height == 2  # the default admits it


def test_zip_with_a_damaged_member_names_it(tmp_path):
    z = _zip(tmp_path / "dmg.zip", {"taxon.tsv": TAXON_OK * 50, "name.tsv": NAME_OK})
    raw = bytearray(z.read_bytes())
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("taxon.tsv")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start + 5, start + 25):  # scramble the compressed data
        raw[i] ^= 0x5A
    z.write_bytes(bytes(raw))
    with pytest.raises(ColdpError, match=r"dmg\.zip: member 'taxon\.tsv' is damaged or truncated"):
        read_coldp(z)


LATIN1_NAME = "ID\tscientificName\tauthorship\trank\nn1\tLinnaea\tGronov. ex L.\tgenus\nn2\tLinnaea borealis\tLinné\tspecies\n"


def test_latin1_mojibake_attack_is_an_error_naming_file_line_and_byte(tmp_path):
    """A Latin-1 table used to be read as 'Linn\\ufffd' without a word; it is an error naming
    the file, the line and the byte, and saying how to declare the encoding."""
    d = tmp_path / "latin1"
    d.mkdir()
    (d / "taxon.tsv").write_text(TAXON_OK)
    (d / "name.tsv").write_bytes(LATIN1_NAME.encode("latin-1"))
    offset = LATIN1_NAME.encode("latin-1").index(b"\xe9")
    with pytest.raises(ColdpError, match=rf"name\.tsv: line 3, byte {offset} of the file \(0xe9\): not valid "
                                         r"utf-8 .*encoding='latin-1'"):
        coldp_tree(d)
    # the same inside a zip names the member and the archive
    z = _zip(tmp_path / "latin1.zip", {"ds/taxon.tsv": TAXON_OK, "ds/name.tsv": LATIN1_NAME.encode("latin-1")})
    with pytest.raises(ColdpError, match=r"latin1\.zip \(member ds/name\.tsv\): line 3"):
        coldp_tree(z)


def test_declared_latin1_is_read_correctly(tmp_path):
    d = tmp_path / "latin1"
    d.mkdir()
    (d / "taxon.tsv").write_text(TAXON_OK)
    (d / "name.tsv").write_bytes(LATIN1_NAME.replace("Linnaea borealis", "Linnæa borealis").encode("latin-1"))
    ct = read_coldp(d, encoding="latin-1")
    assert set(ct.taxa["label"]) == {"Linnaea", "Linnæa borealis"}
    assert ct.info["encoding"] == "iso8859-1" and ct.info["encoding_declared_by"] == "argument"
    # declared in the dataset's metadata.yaml (a zip, so it is extracted and read too)
    z = _zip(tmp_path / "meta.zip", {"taxon.tsv": TAXON_OK, "metadata.yaml": "title: x\nencoding: cp1252\n",
                                     "name.tsv": (d / "name.tsv").read_bytes()})
    ct = read_coldp(z)
    assert "Linnæa borealis" in set(ct.taxa["label"]) and ct.info["encoding"] == "cp1252"
    # a declared encoding the bytes do not fit is an error too (0x81 is undefined in cp1252)
    (d / "name.tsv").write_bytes(b"ID\tscientificName\nn1\tA\x81b\nn2\tB\n")
    with pytest.raises(ColdpError, match=r"name\.tsv: line 2, byte \d+ of the file \(0x81\): not valid cp1252"):
        read_coldp(d, encoding="cp1252")
    with pytest.raises(ColdpError, match="unknown encoding 'klingon'"):
        read_coldp(d, encoding="klingon")


def test_utf8_with_bom_and_real_utf8_still_read(tmp_path):
    d = tmp_path / "bom"
    d.mkdir()
    (d / "taxon.tsv").write_bytes(b"\xef\xbb\xbf" + TAXON_OK.encode())
    (d / "name.tsv").write_text(LATIN1_NAME, encoding="utf-8")
    assert set(read_coldp(d).taxa["label"]) == {"Linnaea", "Linnaea borealis"}


@pytest.mark.parametrize("flavour", ["split", "nameusage"])
def test_empty_taxon_table_attack_is_an_error_naming_the_file(tmp_path, flavour):
    """An empty Taxon.tsv gave polars' bare NoDataError; now the file is named."""
    d = tmp_path / flavour
    d.mkdir()
    main = "Taxon.tsv" if flavour == "split" else "NameUsage.tsv"
    if flavour == "split":
        (d / "Name.tsv").write_text(NAME_OK)
    (d / main).write_bytes(b"")
    with pytest.raises(ColdpError, match=rf"{main}: the file is empty \(expected a header line"):
        coldp_tree(d)
    (d / main).write_text("ID\tparentID\tnameID\tscientificName\n")
    with pytest.raises(ColdpError, match=rf"{main}: a header but no records"):
        coldp_tree(d)


# --------------------------------------------------------------------------- one file per table
@pytest.mark.parametrize("second", ["data/Taxon.tsv", "taxon.csv", "Taxon.txt", "old/copy/taxon.tsv"])
def test_zip_with_two_taxon_tables_is_an_error_naming_both(tmp_path, second):
    """Two files that could hold the Taxon table: an error naming both, never a guess (as
    iNat21's reader does for two annotation files)."""
    z = _zip(tmp_path / "two.zip", {"Taxon.tsv": TAXON_OK, second: TAXON_OK.replace("t2", "t9"), "Name.tsv": NAME_OK})
    with pytest.raises(ColdpError, match=rf"two\.zip: holds 2 files for the taxon table \(.*Taxon\.tsv.*\); "
                                         "refusing to guess") as e:
        coldp_tree(z)
    assert second in str(e.value)
    d = tmp_path / "folder"
    for name, text in {"Taxon.tsv": TAXON_OK, second: TAXON_OK, "Name.tsv": NAME_OK}.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    with pytest.raises(ColdpError, match="holds 2 files for the taxon table"):
        coldp_tree(d)


def test_two_name_usage_tables_and_macos_metadata(tmp_path):
    usage = "ID\tparentID\tstatus\tscientificName\trank\nu1\t\taccepted\tEsox\tgenus\n"
    z = _zip(tmp_path / "nu.zip", {"a/NameUsage.tsv": usage, "b/name-usage.tsv": usage})
    with pytest.raises(ColdpError, match=r"holds 2 files for the nameusage table \(a/NameUsage\.tsv, b/name-usage\.tsv\)"):
        coldp_tree(z)
    # what macOS adds to a zip is never a second table
    z = _zip(tmp_path / "mac.zip", {"Taxon.tsv": TAXON_OK, "Name.tsv": NAME_OK, "__MACOSX/._Taxon.tsv": b"\x00\x05",
                                    "._Name.tsv": b"\x00\x05"})
    assert coldp_tree(z).nodes.height == 2
