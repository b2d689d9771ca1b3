"""Scientific names: the normal form (Python and vectorised agree), epithet stems, and the
VLM4Bio and BioCLIP label sets read from the real files."""

from __future__ import annotations

import json
import re

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.links.scientific_names import (
    bioclip_labels,
    epithet_stem,
    epithet_stem_expr,
    scientific_key,
    vlm4bio_labels,
    with_scientific_key,
)
from tests.conftest import shared_file


def _raw_vlm4bio_names() -> set[str]:
    """Every target-class and option of the result files, read independently of the module."""
    out = set()
    for f in shared_file("vlm4bio", "results").rglob("*.jsonl"):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r.get("target-class"):
                out.add(r["target-class"])
            opts = re.search(r"Options:(.*?)(?:\.\s*\n|\.\s*Write|\.\s*$|\n)", r["question"], re.S).group(1)
            out.update(x.strip() for x in re.split(r",?\s*[A-D]\)\s*", opts) if x.strip())
    return out


def test_keys_and_stems():
    assert scientific_key("Esox Americanus") == scientific_key("esox americanus") == "esox americanus"
    assert scientific_key("Crepis bakeri subsp. bakeri") == "crepis bakeri bakeri"
    assert scientific_key("Quercus robur var. robur f. fastigiata") == "quercus robur robur fastigiata"
    # punctuation separates words (a file name, an abbreviation without a space); apostrophes join
    assert scientific_key("lespedeza_juncea_var.sericea") == "lespedeza juncea sericea"
    assert scientific_key("Crataegus o'neilliana") == scientific_key("Crataegus O’Neilliana") == "crataegus oneilliana"
    assert scientific_key("ＥＳＯＸ  lucius") == "esox lucius"  # NFKC
    assert scientific_key(None) == scientific_key("") == ""
    assert epithet_stem("buccatus") == epithet_stem("buccata")
    assert epithet_stem("aegyptiacus") == epithet_stem("aegyptiaca") == "aegyptiac"
    assert epithet_stem("ab") == "ab"


WORDS = ["Crepis", "bakeri", "subsp.", "var", "f.", "x", "-", "_", " ", "cf", "O'Neill", "(L.)", "sp", "ssp.", "  ",
         "Forma", "×", "var.sericea", "Esox_lucius", "O’Neill", "ÉSOX", "ﬁlix", "Ⅳ", "ß", "‐"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
                | st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)
                | st.text(max_size=20), min_size=1, max_size=20))
def test_vectorised_key_equals_scientific_key(texts):
    """The vectorised key used for printable ASCII is exactly scientific_key; other text goes
    through scientific_key itself."""
    df = with_scientific_key(pl.DataFrame({"n": texts}), "n")
    assert df["_key"].to_list() == [scientific_key(t) for t in texts]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=14), min_size=1, max_size=30))
def test_vectorised_stem_equals_epithet_stem(words):
    got = pl.DataFrame({"w": words}).select(epithet_stem_expr(pl.col("w")))["w"].to_list()
    assert got == [epithet_stem(w) for w in words]


def test_vlm4bio_label_set_is_complete():
    v = vlm4bio_labels(shared_file("vlm4bio"))
    assert set(v["label_text"]) == _raw_vlm4bio_names()
    assert set(v["dataset"]) == {"vlm4bio-fish", "vlm4bio-bird", "vlm4bio-butterfly"}


def test_bioclip_label_set_has_common_names():
    b = bioclip_labels(shared_file("bioclip", "rare_species_400_lineage_common_names.csv"))
    assert b.height == 400 and b["common_name"].null_count() < 400
    assert b.select(pl.struct("dataset", "label_id").is_unique().all()).item()
