"""The default exclusion list, user exclusion files, and seed files."""

from __future__ import annotations

import pytest

from taxoforge.sources.wikidata.exclusions import DEFAULT_EXCLUSIONS, exclusion_node_ids, load_exclusions
from taxoforge.sources.wikidata.extract import read_seed_qids
from taxoforge.sources.wikidata.ids import QID_RE


def test_default_list_has_a_reason_per_qid():
    assert len(DEFAULT_EXCLUSIONS) >= 20
    for q, reason in DEFAULT_EXCLUSIONS.items():
        assert QID_RE.fullmatch(q), q
        assert len(reason) > 10, q
    assert "Q35120" not in DEFAULT_EXCLUSIONS  # never the root


def test_exclusion_file(tmp_path):
    p = tmp_path / "excl.txt"
    p.write_text("# my list\nQ5\thuman: too broad\n\nQ7 # with a hash comment\nwd:Q9\n")
    assert load_exclusions(p) == {"Q5": "human: too broad", "Q7": "with a hash comment", "Q9": ""}
    ids = exclusion_node_ids(use_default=False, file=p, extra=["Q11"])
    assert ids == {"wd:Q11": "given in the configuration", "wd:Q5": "human: too broad",
                   "wd:Q7": "with a hash comment", "wd:Q9": f"listed in {p}"}
    assert set(exclusion_node_ids()) == {f"wd:{q}" for q in DEFAULT_EXCLUSIONS}
    p.write_text("Q5\nhuman\n")
    with pytest.raises(ValueError, match=r"excl\.txt:2: 'human' is not a Wikidata QID"):
        load_exclusions(p)
    with pytest.raises(ValueError, match=r"exclude\[0\]"):
        exclusion_node_ids(extra=["Q1; DROP"])


def test_seed_files(tmp_path, wikidata_dir):
    assert read_seed_qids(wikidata_dir / "oven_bm25_candidate_qid_labels.tsv")[:3] == ["Q15", "Q16", "Q17"]
    p = tmp_path / "seeds.txt"
    p.write_text("# seeds\nQ146\n\nQ5\n")
    assert read_seed_qids(p) == ["Q146", "Q5"]
    p.write_text("qid\tlabel\nQ1\tuniverse\nQx\tbad\n")
    with pytest.raises(ValueError, match=r"seeds\.txt:3"):
        read_seed_qids(p)
