"""The shared normal form and the noun base forms (docs/method.md#mapping-an-answer-to-a-node)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from taxoforge.text import (
    BASE_FORM_TABLE,
    _rule_base_form,
    base_form,
    base_form_text,
    derive_noun_base_forms,
    morphy_analyses,
    normalise_text,
    read_wordnet_nouns,
)

WORDNET_DIR = Path("/usr/share/wordnet")
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text,norm", [
    ("a dog/wolf hybrid", "a dog wolf hybrid"),          # punctuation splits words, never glues them
    ("Pied-billed Grebe!", "pied billed grebe"),
    ("Quercus × bebbiana", "quercus bebbiana"),           # symbols too
    ("(Esox lucius)", "esox lucius"),
    ("I can't tell", "i cant tell"),                      # an apostrophe inside a word keeps it whole
    ("Cooper’s Hawk", "coopers hawk"),                    # typographic apostrophe alike
    ("the dogs' bowl", "the dogs bowl"),                  # a trailing apostrophe is punctuation
    ("'quoted'", "quoted"),
    ("ＦＵＬＬ　ｗｉｄｔｈ", "full width"),                  # NFKC
    ("Straße", "strasse"),                               # casefold
    (None, ""), ("  ", ""),
])
def test_normal_form(text, norm):
    assert normalise_text(text) == norm


def test_normal_form_is_idempotent():
    for t in ("a dog/wolf hybrid", "St. John's-wort", "O'Neill's 2-toed sloth", "ÉCOLE—normale"):
        n = normalise_text(t)
        assert normalise_text(n) == n


@pytest.mark.parametrize("word,base", [
    ("dogs", "dog"), ("tenches", "tench"), ("butterflies", "butterfly"), ("foxes", "fox"),
    ("geese", "goose"), ("mice", "mouse"), ("wolves", "wolf"), ("children", "child"), ("firemen", "fireman"),
    ("glasses", "glass"), ("irises", "iris"), ("buses", "bus"), ("horses", "horse"),
    ("bass", "bass"), ("lens", "lens"), ("lenses", "lens"), ("cactus", "cactus"), ("americanus", "americanus"),
    ("this", "this"),
])
def test_base_forms(word, base):
    assert base_form(word) == base


def test_base_form_text_on_both_sides():
    assert base_form_text("There are two Tenches!") == "there are two tench"
    assert base_form_text("Golden Retrievers") == base_form_text("golden retriever")


def _table_file() -> dict[str, str]:
    text = (REPO / "taxoforge" / BASE_FORM_TABLE).read_text(encoding="utf-8")
    return dict(line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))


def test_base_forms_are_idempotent_and_plurals_share_their_singular():
    table = _table_file()
    assert len(table) > 1000
    for w, b in table.items():
        assert base_form(b) == b, (w, b)
        assert base_form(w) == b
    for w in ("dog", "tench", "fox", "butterfly", "kelpie", "glass", "lens", "wolf", "goose", "species"):
        plural = {"wolf": "wolves", "goose": "geese", "species": "species"}.get(w) or (
            w[:-1] + "ies" if w.endswith("y") else w + ("es" if w.endswith(("s", "x", "ch", "sh")) else "s"))
        assert base_form(plural) == base_form(w), (w, plural)


def test_rules_reach_a_fixed_point():
    for w in ("abcmens", "xyzies", "tenches", "glassess", "sapiens", "bosses"):
        b = _rule_base_form(w)
        assert _rule_base_form(b) == b


@pytest.mark.skipif(not (WORDNET_DIR / "index.noun").exists(), reason="WordNet 3.0 (Debian wordnet-base) not installed")
def test_shipped_table_is_what_the_script_derives_from_debian_wordnet(tmp_path):
    spec = importlib.util.spec_from_file_location("derive", REPO / "scripts" / "derive_noun_base_forms.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["derive"] = mod
    spec.loader.exec_module(mod)
    shipped = (REPO / "taxoforge" / BASE_FORM_TABLE).read_text(encoding="utf-8")
    assert mod.render(derive_noun_base_forms(WORDNET_DIR)) == shipped


@pytest.mark.skipif(not (WORDNET_DIR / "index.noun").exists(), reason="WordNet 3.0 (Debian wordnet-base) not installed")
def test_analyses_are_nltks_morphy():
    """The analyses the table is derived from are NLTK's own ``morphy`` analyses (the word
    itself left out), on every word of the table and its base form."""
    from taxoforge.sources.wordnet_data import WordNetUnavailable, ensure_wordnet

    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))
    from nltk.corpus import wordnet as wn

    lemmas, exceptions = read_wordnet_nouns(WORDNET_DIR)
    words = sorted(set(_table_file()) | set(_table_file().values()))
    for w in words:
        assert morphy_analyses(w, lemmas, exceptions) == [a for a in wn._morphy(w, "n") if a != w], w
