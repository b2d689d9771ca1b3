"""METEOR over the stored WordNet synonym table equals NLTK's ``meteor_score`` with WordNet itself."""

from __future__ import annotations

import random

import pytest

from taxoforge.scores.measures.meteor import SynonymTable, meteor, synonym_table, table_path
from taxoforge.scores.measures.text import porter_stemmer


@pytest.fixture(scope="module")
def wordnet():
    from taxoforge.sources.wordnet_data import WordNetUnavailable, ensure_wordnet

    try:
        return ensure_wordnet(allow_download=False)
    except WordNetUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def stored(wordnet):
    """The table as a scoring run gets it: built once into the cache folder, then opened."""
    return synonym_table()


def _table_from_nltk(wn) -> SynonymTable:
    """The reference: the table as NLTK's WordNet reader gives it (every synset's lemma names
    through ``synset_from_pos_and_offset``, its lemma map, exception map and morphy rules)."""
    from taxoforge.scores.measures.meteor import POS_ORDER

    names_of: dict[tuple[str, int], str] = {}

    def synset_names(pos: str, offset: int) -> str:
        if (pos, offset) not in names_of:
            ss = wn.synset_from_pos_and_offset(pos, offset)
            names_of[pos, offset] = " ".join(sorted({lm.name() for lm in ss.lemmas() if "_" not in lm.name()}))
        return names_of[pos, offset]

    lemmas: dict[str, dict[str, str]] = {p: {} for p in POS_ORDER}
    for lemma, by_pos in wn._lemma_pos_offset_map.items():
        for pos in POS_ORDER:
            if (offsets := by_pos.get(pos)) is not None:
                names = {n for off in offsets if (s := synset_names(pos, off)) for n in s.split(" ")}
                lemmas[pos][lemma] = " ".join(sorted(names))
    exceptions = {p: {k: list(v) for k, v in wn._exception_map[p].items()} for p in POS_ORDER}
    subs = {p: [list(r) for r in wn.MORPHOLOGICAL_SUBSTITUTIONS[p]] for p in POS_ORDER}
    return SynonymTable(lemmas, exceptions, subs, version=str(wn.get_version()))


def _words(wn, n: int, seed: int) -> list[str]:
    """Seeded words METEOR meets: WordNet lemmas of every part of speech, inflected by the
    suffixes morphy undoes, exception forms (irregular plurals and verbs), capitalised
    words, and words WordNet lacks."""
    rng = random.Random(seed)
    lemmas = sorted(w for w in wn._lemma_pos_offset_map if "_" not in w)
    exceptions = sorted({f for p in "nvar" for f in wn._exception_map[p]})
    out = []
    for _ in range(n):
        w = rng.choice(lemmas)
        kind = rng.randrange(6)
        if kind == 1:
            w += rng.choice(["s", "es", "ies", "ing", "ed", "er", "est", "men"])
        elif kind == 2:
            w = rng.choice(exceptions)
        elif kind == 3:
            w = w.capitalize()
        elif kind == 4:
            w = "".join(rng.sample(w, len(w))) + "x"
        out.append(w)
    return out


def test_synonyms_equal_nltk_synsets_lemma_names(wordnet, stored):
    table = SynonymTable.from_wordnet_files(str(wordnet.root))
    words = _words(wordnet, 4000, seed=1) + ["geese", "dogs", "better", "ran", "mice", "Dog", "oxen", "axes"]
    for w in words:
        want = {lm.name() for s in wordnet.synsets(w) for lm in s.lemmas() if "_" not in lm.name()}
        assert table.synonyms(w) == want, w
        assert stored.synonyms(w) == want, w


def test_the_table_read_from_wordnets_files_equals_the_one_from_nltks_reader(wordnet):
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from taxoforge.scores.measures.meteor import MORPHOLOGICAL_SUBSTITUTIONS, POS_ORDER

    assert {p: tuple(MORPHOLOGICAL_SUBSTITUTIONS[p]) for p in POS_ORDER} == {
        p: tuple(WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS[p]) for p in POS_ORDER}
    from_files, from_nltk = SynonymTable.from_wordnet_files(str(wordnet.root)), _table_from_nltk(wordnet)
    for field in ("lemmas", "exceptions", "substitutions", "version"):
        assert getattr(from_files, field) == getattr(from_nltk, field), field


def test_meteor_equals_nltk_meteor_score_over_many_pairs(wordnet, stored, shared_data):
    """Random sentences from WordNet words, each reference built from its hypothesis by
    swapping in synonyms, inflecting, dropping and reordering words, plus the real VLM4Bio
    answers against their labels: every score identical (==, not approximately)."""
    import json

    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import meteor_score

    from taxoforge.text import normalise_text

    rng = random.Random(7)
    vocab = _words(wordnet, 3000, seed=2)
    pairs = []
    for _ in range(1500):
        hyp = [rng.choice(vocab) for _ in range(rng.randint(1, 8))]
        ref = []
        for w in hyp:
            r = rng.random()
            if r < 0.3:
                syn = sorted(stored.synonyms(w))
                ref.append(rng.choice(syn) if syn else w)
            elif r < 0.45:
                ref.append(w + "s")
            elif r < 0.55:
                continue
            else:
                ref.append(w)
        if rng.random() < 0.3:
            rng.shuffle(ref)
        ref = ref or [rng.choice(vocab)]
        pairs.append((ref, hyp))
    for path in sorted((shared_data / "vlm4bio" / "results").rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            hyp, ref = normalise_text(row.get("output")).split(), normalise_text(row.get("target-class")).split()
            if hyp and ref:
                pairs.append((ref, hyp))
    assert len(pairs) > 1600
    stem = porter_stemmer().stem
    nltk_stemmer = PorterStemmer()
    differ = [(ref, hyp) for ref, hyp in pairs
              if meteor(ref, hyp, stored.synonyms, stem) != meteor_score([ref], hyp, stemmer=nltk_stemmer,
                                                                            wordnet=wordnet)]
    assert differ == []
    assert sum(meteor(r, h, stored.synonyms, stem) > 0 for r, h in pairs) > 1000  # the pairs do align


def test_a_stored_table_of_another_format_or_damaged_is_not_used(tmp_path):
    """:func:`synonym_table` builds the table again when :meth:`SynonymTable.open` refuses the file."""
    import sqlite3

    path = table_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an sqlite file")
    assert SynonymTable.open(path) is None
    SynonymTable({"n": {"dog": "dog domestic"}}, {"n": {}}, {"n": [["s", ""]]}, "3.0").write(path)
    opened = SynonymTable.open(path)
    assert opened is not None and opened.synonyms("dogs") == {"dog", "domestic"}
    with sqlite3.connect(path) as con:
        con.execute("UPDATE meta SET value = '0' WHERE key = 'format'")
    assert SynonymTable.open(path) is None


def test_meteor_without_matches_is_zero():
    assert meteor(["this", "is", "a", "cat"], ["non", "matching", "hypothesis"], lambda w: frozenset(), str) == 0.0
    assert meteor(["cat"], [], lambda w: frozenset(), str) == 0.0


# ---------------------------------------------------------------------------- built at install
def _small_table() -> SynonymTable:
    return SynonymTable({"n": {"dog": "dog domestic"}}, {"n": {}}, {"n": [["s", ""]]}, "3.0")


@pytest.fixture
def small_wordnet(monkeypatch):
    """WordNet replaced by a one-lemma table, so that building is instant; the calls counted."""
    from taxoforge.scores.measures import meteor as m

    builds = []

    def from_wordnet_files(folder):
        builds.append(folder)
        return _small_table()

    monkeypatch.setattr(m, "wordnet_folder", lambda **_: "wordnet")
    monkeypatch.setattr(m.SynonymTable, "from_wordnet_files", staticmethod(from_wordnet_files))
    return builds


def test_a_table_built_at_install_is_found_by_a_fresh_cache_folder(tmp_path, small_wordnet, monkeypatch):
    from taxoforge.scores.measures.meteor import BUILDING, install_synonym_table, installed_table_path

    share = tmp_path / "share"
    lines = []
    path = install_synonym_table(share, echo=lines.append)
    assert path == installed_table_path(share) and path.is_file() and len(small_wordnet) == 1
    assert (path.parent / (path.name + ".sha256")).read_text().split()[0] == __import__(
        "hashlib").sha256(path.read_bytes()).hexdigest()
    assert "built into the installation" in lines[-1]
    install_synonym_table(share, echo=lines.append)  # intact: kept, not built again
    assert "already installed" in lines[-1] and len(small_wordnet) == 1
    said = []
    for trust in ("mine", "fresh"):  # the installing user's record, and a user with none (ownership + digest)
        if trust == "fresh":
            monkeypatch.setenv("TAXOFORGE_TRUST_DIR", str(tmp_path / "trust-of-another-session"))
        cache = tmp_path / f"cache-{trust}"
        table = synonym_table(cache, share_dir=share, progress=said.append)
        assert table.synonyms("dogs") == {"dog", "domestic"}
        assert not table_path(cache).exists() and said == [] and len(small_wordnet) == 1
    assert BUILDING.startswith("building METEOR's WordNet synonym table (once)")


@pytest.mark.parametrize("harm", ["edited", "digest file removed", "others may write it", "a link"])
def test_a_damaged_or_foreign_installed_table_is_passed_over(tmp_path, small_wordnet, monkeypatch, harm):
    """An installed table that cannot be trusted is never used: the table is built into the
    cache folder, with the progress line, as when nothing was installed."""
    import os
    import sqlite3

    from taxoforge.scores.measures.meteor import BUILDING, install_synonym_table

    share = tmp_path / "share"
    path = install_synonym_table(share, echo=lambda _: None)
    monkeypatch.setenv("TAXOFORGE_TRUST_DIR", str(tmp_path / "trust-of-another-user"))  # no record of it
    if harm == "edited":  # valid SQLite, its digest file left as it was
        with sqlite3.connect(path) as con:
            con.execute("UPDATE lemma SET names = names || ' cat' WHERE lemma = 'dog'")
    elif harm == "digest file removed":
        (path.parent / (path.name + ".sha256")).unlink()
    elif harm == "others may write it":
        os.chmod(path, 0o666)
    else:
        real = tmp_path / "elsewhere.sqlite"
        path.rename(real)
        path.symlink_to(real)
    said = []
    table = synonym_table(tmp_path / "cache", share_dir=share, progress=said.append)
    assert said == [BUILDING] and len(small_wordnet) == 2
    assert table_path(tmp_path / "cache").is_file() and table.synonyms("dog") == {"dog", "domestic"}
