"""TI, SS, CS and LI of Conti et al. 2025 [3]: by hand with a transparent bag-of-words encoder, as
properties, with the real all-MiniLM-L6-v2 where the optional packages are installed, and the
LI hook with a user-supplied judge (skipped with a clear message without one)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.evaluation import open_world_measures as sm
from tests.conftest import minilm_or_skip

VOCAB = ["dog", "labrador", "cat", "sofa", "photo", "room", "elephant", "animal"]


def bow(texts):
    """A transparent encoder: word counts over VOCAB (plus one slot for anything else)."""
    out = np.zeros((len(texts), len(VOCAB) + 1))
    for i, t in enumerate(texts):
        for w in t.lower().split():
            out[i, VOCAB.index(w) if w in VOCAB else len(VOCAB)] += 1
    return out


def test_text_inclusion_is_plain_substring_after_lowercasing():
    got = sm.text_inclusion(["A Labrador dog", "labrador", "the sofa ", "couch"], ["labrador dog", "labrador dog", "Sofa", "sofa"])
    assert got.tolist() == [1.0, 0.0, 1.0, 0.0]   # the paper's own example: "labrador" misses "labrador dog"


def test_semantic_and_concept_similarity_by_hand():
    # "elephant room" vs reference "elephant": bow vectors (elephant=1, room=1) · (elephant=1) / (√2 · 1)
    ss = sm.semantic_similarity(["elephant room"], ["elephant"], bow)
    assert ss[0] == pytest.approx(1 / np.sqrt(2))
    # CS: the concept "elephant" of "a photo of an elephant in the room" matches exactly
    cs = sm.concept_similarity(["a photo of an elephant in the room"], ["elephant"], bow)
    assert cs[0] == pytest.approx(1.0)
    assert sm.concepts("a photo of an elephant in the room")[:2] == ["elephant", "room"]


@settings(max_examples=40, deadline=None)
@given(pred=st.lists(st.sampled_from(VOCAB + ["zzz"]), min_size=1, max_size=6),
       ref=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3))
def test_properties(pred, ref):
    p, r = " ".join(pred), " ".join(ref)
    ss = sm.semantic_similarity([p], [r], bow)[0]
    cs = sm.concept_similarity([p], [r], bow)[0]
    assert -1 - 1e-9 <= ss <= 1 + 1e-9 and cs >= ss - 1e-12          # the whole prediction is a concept
    assert sm.semantic_similarity([r], [r], bow)[0] == pytest.approx(1.0)
    assert sm.semantic_similarity([p], [r], bow)[0] == pytest.approx(sm.semantic_similarity([r], [p], bow)[0])
    assert sm.text_inclusion([p + " " + r], [r])[0] == 1.0


def test_llm_inclusion_with_a_judge_and_without_one():
    seen = []

    def judge(prompt):
        seen.append(prompt)
        return "1" if "dog" in prompt.split("This is the answer:")[1].split("\n")[0] else "0, not the target"

    li = sm.llm_inclusion(["a dog", "a cat", ""], ["labrador", "labrador", "labrador"], judge)
    assert li.tolist() == [1.0, 0.0, 0.0]
    assert "This is the question: What type of object is in this image?" in seen[0]
    assert "This is the target value: labrador" in seen[0] and seen[0].endswith('Reply only with "1" if yes, or "0" if no.')
    assert np.isnan(sm.llm_inclusion(["x"], ["y"], lambda p: "maybe")[0])
    with pytest.raises(sm.JudgeNotConfigured, match="LI \\(LLM inclusion\\) needs a judge"):
        sm.llm_inclusion(["x"], ["y"])
    got, skipped = sm.open_world_measures(["a dog"], ["dog"], encode=bow)
    assert set(got) == {"TI", "SS", "CS"} and "needs a judge" in skipped["LI"]


def test_real_minilm_encoder_when_installed():
    minilm_or_skip()  # skips naming the missing package
    enc = sm.sentence_encoder(device="cpu")
    assert enc.device == "cpu" and len(enc.model_id) == 16
    ss = sm.semantic_similarity(["a sofa", "a photo of a couch", "a rocket"], ["couch", "couch", "couch"], enc)
    assert ss[1] > ss[2] and ss[0] > ss[2]        # sofa ~ couch, rocket is not
    cs = sm.concept_similarity(["a photo of an elephant in the room"], ["elephant"], enc)
    assert cs[0] == pytest.approx(1.0, abs=1e-5)  # the concept "elephant" is the reference itself
