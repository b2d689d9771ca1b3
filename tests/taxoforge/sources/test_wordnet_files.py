"""WordNet's noun synsets read from its database files agree with NLTK's reader, synset by synset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from taxoforge.sources import wordnet_data as wndata
from taxoforge.sources import wordnet_files as wnf


@pytest.fixture(scope="module")
def wn():
    try:
        return wndata.ensure_wordnet(allow_download=False)
    except wndata.WordNetUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def nouns(wn):
    return wnf.wordnet_nouns(Path(str(wn.root)))


def _offsets(synsets) -> tuple[int, ...]:
    return tuple(sorted({s.offset() for s in synsets}))


def test_every_noun_synset_agrees_with_nltk(wn, nouns):
    ours = nouns.by_offset()
    theirs = list(wn.all_synsets("n"))
    assert [s.offset() for s in theirs] == [s.offset for s in nouns.synsets]  # file order
    differ = []
    for s in theirs:
        o = ours[s.offset()]
        got = (o.name, o.lemma_names, o.related(wnf.HYPERNYM), o.related(wnf.INSTANCE_HYPERNYM),
               o.related(wnf.MEMBER_MERONYM), o.related("%p"), o.related("~"))
        want = (s.name(), tuple(s.lemma_names()), _offsets(s.hypernyms()), _offsets(s.instance_hypernyms()),
                _offsets(s.member_meronyms()), _offsets(s.part_meronyms()), _offsets(s.hyponyms()))
        if got != want:
            differ.append((s.name(), got, want))
    assert differ == [] and len(theirs) == 82_115
    assert nouns.version == wn.get_version() == "3.0"


def test_source_version_names_the_files_read(nouns):
    v = nouns.source_version()
    assert v["wordnet"] == "3.0" and v["folder"] == str(nouns.folder)
    assert len(v["data.noun"]) == len(v["index.noun"]) == 64 and v["data.noun"] != v["index.noun"]


def test_nltk_data_path_is_nltks_own(tmp_path):
    env = {"HOME": str(tmp_path), "NLTK_DATA": f"{tmp_path}/a:{tmp_path}/b", "PATH": "/usr/bin:/bin"}
    code = "import json, nltk.data; print(json.dumps(nltk.data.path))"
    theirs = json.loads(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                       check=True).stdout)
    assert [str(p) for p in wnf.nltk_data_path(env)] == theirs


def test_a_copy_on_nltk_data_path_comes_first(nouns, tmp_path, monkeypatch):
    corpus = tmp_path / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    for f in ("data.noun", "index.noun"):
        (corpus / f).write_bytes((nouns.folder / f).read_bytes())
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    assert wnf.wordnet_folder() == corpus
    assert wnf.wordnet_source_version()["data.noun"] == nouns.source_version()["data.noun"]


def _tiny_wordnet(folder: Path, data_lines: list[str], index_lines: list[str]) -> Path:
    header = "  1 This software and database is being provided to you, the LICENSEE, by  \n" \
             "  2 WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.  \n"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.noun").write_text(header + "".join(line + "\n" for line in data_lines))
    (folder / "index.noun").write_text(header + "".join(line + "\n" for line in index_lines))
    return folder


def test_names_follow_the_sense_order_of_the_index(tmp_path):
    folder = _tiny_wordnet(tmp_path / "wn", [
        "00000100 03 n 01 entity 0 001 ~ 00000200 n 0000 | that which exists",
        "00000200 03 n 02 Dog 0 domestic_dog(p) 0 002 @ 00000100 n 0000 @ 00000100 n 0102 | a dog",
    ], ["dog n 2 1 @ 2 0 00000300 00000200  ", "entity n 1 1 ~ 1 0 00000100  "])
    dog = wnf.wordnet_nouns(folder).by_offset()[200]
    assert dog.name == "dog.n.02" and dog.lemma_names == ("Dog", "domestic_dog")
    assert dog.related(wnf.HYPERNYM) == (100,)  # the lexical pointer (0102) is not a synset's


@pytest.mark.parametrize("line,index", [
    ("00000200 03 n 03 dog 0 | three words announced, one given", "dog n 1 0 1 0 00000200  "),
    ("00000200 03 n 01 dog 0 002 @ 00000100 n 0000 | two pointers announced, one given", "dog n 1 0 1 0 00000200  "),
    ("00000200 03 n 01 dog 0 000 | a lemma missing from the index", "cat n 1 0 1 0 00000200  "),
])
def test_a_malformed_line_names_its_file_and_line(tmp_path, line, index):
    folder = _tiny_wordnet(tmp_path / "wn", [line], [index])
    with pytest.raises(wnf.MalformedWordNet, match=r"data\.noun, line 3: expected"):
        wnf.wordnet_nouns(folder)


def test_a_folder_without_wordnet_is_unavailable(tmp_path):
    (tmp_path / "data.noun").write_text("not wordnet\n")
    (tmp_path / "index.noun").write_text("")
    with pytest.raises(wndata.WordNetUnavailable, match="no WordNet data.noun"):
        wnf.wordnet_nouns(tmp_path)
