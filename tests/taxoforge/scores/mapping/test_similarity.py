"""Pluggable similarity measures: an embedding measure plugs into the mapping, and the real
sentence-transformers measure — all-MiniLM-L6-v2 from PyPI on the CPU (the ``embeddings``
extra; every test using it skips naming the missing package where it is not installed)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from rapidfuzz import fuzz

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.embedding_measures import SentenceTransformerSimilarity, similarity_from_spec
from taxoforge.scores.mapping.similarity import EmbeddingSimilarity
from taxoforge.scores.mapping.sentence_models import MINILM, NAME_EMBEDDINGS
from taxoforge.trees.taxonomy import Taxonomy
from tests.conftest import minilm_or_skip

from tests.taxoforge.scores.conftest import mapped, tree_tables


def trigram_encoder(texts):
    """A real (tiny) encoder: bag of character trigrams hashed into 64 dimensions."""
    out = np.zeros((len(texts), 64), np.float32)
    for i, t in enumerate(texts):
        t = f"  {t} "
        for j in range(len(t) - 2):
            out[i, hash(t[j:j + 3]) % 64] += 1
    return out


def test_embedding_similarity_plugs_in(inat_like):
    sim = EmbeddingSimilarity(trigram_encoder, name="trigram-test")
    ix = TaxonomyIndex(Taxonomy.of(inat_like), MappingConfig(similarity="ratio"), similarity=sim)
    assert ix.similarity.name == "trigram-test"
    assert mapped(ix, "Aloe vera")[0] == "aloe_vera"
    assert mapped(ix, "Toucans!")[0] == "ramphastidae"


def test_precomputed_embeddings_are_checked_and_used_as_given(tmp_path):
    names = ["aloe vera", "toco toucan", "ants"]
    sim = EmbeddingSimilarity(trigram_encoder, name="trigram-test")
    e = sim.embed_names(names)
    assert e.dtype == np.float32 and np.allclose(np.linalg.norm(e, axis=1), 1, atol=1e-6)
    np.save(tmp_path / "e.npy", e)
    mm = np.load(tmp_path / "e.npy", mmap_mode="r")
    sim.bind(names, embeddings=mm)
    assert sim.embeddings is mm  # not copied
    with pytest.raises(ValueError, match=r"for 2 names; expected \(2, d\) float32"):
        sim.bind(names[:2], embeddings=mm)
    with pytest.raises(ValueError, match="float32"):
        sim.bind(names, embeddings=e.astype(np.float64))


def test_prepare_embeds_the_queries_in_batches_and_scores_do_not_call_the_model():
    calls = []

    def encoder(texts):
        calls.append(len(texts))
        return trigram_encoder(texts)

    sim = EmbeddingSimilarity(encoder, name="trigram-test", batch_size=4)
    sim.bind(["aloe vera", "toco toucan", "ants"])
    calls.clear()
    queries = [f"answer {i}" for i in range(10)] + ["answer 3"]
    sim.prepare(queries)
    assert calls == [4, 4, 2]  # 10 distinct queries, batches of 4
    before = sim.batch_scores(queries)
    for q in queries:
        sim.scores(q)
    assert calls == [4, 4, 2] and before.shape == (11, 3)
    fresh = EmbeddingSimilarity(trigram_encoder, name="trigram-test")
    fresh.bind(["aloe vera", "toco toucan", "ants"])
    assert np.allclose(fresh.batch_scores(queries), before, atol=1e-6)  # one at a time: the same


# ---------------------------------------------------------------------------- all-MiniLM-L6-v2
@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerSimilarity:
    return minilm_or_skip("cpu")


@pytest.fixture(scope="module")
def wordnet():
    from taxoforge.sources.wordnet_data import WordNetUnavailable, ensure_wordnet

    try:
        return ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))


def synonym_sets(wn, max_ratio: float = 100.0) -> list[tuple[str, list[str]]]:
    """(synset name, its one-word lemmas) of every WordNet noun synset with two or more
    one-word lemmas whose first two are spelled at most ``max_ratio`` alike (rapidfuzz ratio)."""
    out = []
    for s in wn.all_synsets("n"):
        lemmas = sorted({x.name().lower() for x in s.lemmas() if x.name().isalpha()})
        if len(lemmas) >= 2 and fuzz.ratio(lemmas[0], lemmas[1]) <= max_ratio:
            out.append((s.name(), lemmas))
    return out


def test_minilm_is_the_default_model_of_the_spec(minilm):
    sim = similarity_from_spec("sentence-transformers")
    assert isinstance(sim, SentenceTransformerSimilarity) and sim.model == MINILM
    assert sim.model_id == minilm.model_id and len(sim.model_id) == 16
    assert similarity_from_spec("sentence-transformers:minilm").model_id == minilm.model_id
    assert minilm.dimensions == 384 and minilm.device == "cpu"


@pytest.mark.parametrize("seed", [0, 1])
def test_wordnet_synonyms_score_above_random_pairs(minilm, wordnet, seed):
    sets = synonym_sets(wordnet)
    rng = random.Random(seed)
    pick = rng.sample(sets, 200)
    a = [lemmas[0] for _, lemmas in pick]
    b = [lemmas[1] for _, lemmas in pick]
    c = [rng.choice(rng.choice(sets)[1]) for _ in pick]  # a word of a random other synset
    e = minilm.embed_names(a + b + c, progress=False)
    ea, eb, ec = e[:200], e[200:400], e[400:]
    same, other = (ea * eb).sum(1), (ea * ec).sum(1)
    # AUC: a synonym pair outscores a random pair (0.5 for an encoder that knows no meaning)
    auc = float((same[:, None] > other[None, :]).mean())
    assert auc >= 0.8, auc
    assert float((same > other).mean()) >= 0.8  # paired: the word's synonym beats a random word
    assert same.mean() - other.mean() >= 0.15


def test_embeddings_are_unit_float32_and_deterministic(minilm, wordnet):
    words = [lemmas[0] for _, lemmas in random.Random(3).sample(synonym_sets(wordnet), 300)]
    e1 = minilm.embed_names(words, progress=False)
    assert e1.shape == (300, 384) and e1.dtype == np.float32
    assert np.allclose(np.linalg.norm(e1, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(e1, minilm.embed_names(words, progress=False))  # same call: same bits
    # another order (so other batches and padding): the same vectors up to float32 rounding
    order = np.random.default_rng(0).permutation(len(words))
    e2 = minilm.embed_names([words[i] for i in order], progress=False)
    assert np.allclose(e2, e1[order], atol=2e-5)
    # a query is embedded as a name is
    assert np.allclose(minilm.pair(words[0], words[1]), float(e1[0] @ e1[1]), atol=2e-5)


def test_bind_with_precomputed_embeddings_gives_the_same_scores(minilm, tmp_path, inat_like):
    names = TaxonomyIndex(Taxonomy.of(inat_like), MappingConfig()).names
    minilm.bind(names)
    queries = ["a toucan with a black bill", "succulent plant", "insects", "nothing at all"]
    want = minilm.batch_scores(queries)
    np.save(tmp_path / "emb.npy", minilm.embed_names(names, progress=False))
    other = SentenceTransformerSimilarity(MINILM, device="cpu")
    other.bind(names, embeddings=np.load(tmp_path / "emb.npy", mmap_mode="r"))
    got = other.batch_scores(queries)
    assert np.allclose(got, want, atol=1e-6)
    for q, row in zip(queries, want):
        assert np.allclose(other.scores(q), row, atol=1e-6)
        ids = np.array([0, 3, len(names) - 1])
        assert np.allclose(other.scores(q, ids), row[ids], atol=1e-6)


def test_names_of_a_tree_are_embedded_once_per_process(inat_like, minilm):
    tax = Taxonomy.of(inat_like)
    calls = []

    class Counting(SentenceTransformerSimilarity):
        def embed_names(self, names, progress=None):
            calls.append(len(names))
            return super().embed_names(names, progress)

    NAME_EMBEDDINGS.clear()
    a = TaxonomyIndex(tax, MappingConfig(similarity="sentence-transformers"), similarity=Counting(MINILM, device="cpu"))
    b = TaxonomyIndex(tax, MappingConfig(similarity="sentence-transformers", k=5),
                      similarity=Counting(MINILM, device="cpu"))
    assert calls == [len(a.names)]  # the second index reused the first one's name embeddings
    assert a.similarity.embeddings is b.similarity.embeddings
    assert not a.similarity.embeddings.flags.writeable
    # another model (other weights, other id) does not share them
    c = Counting(MINILM, device="cpu")
    c.model_id = "0" * 16
    c.bind(a.names)
    assert calls == [len(a.names)] * 2


def test_gpu_gives_the_cpu_results(minilm, wordnet, inat_like):
    gpu = minilm_or_skip("cuda")
    words = [w for _, lemmas in random.Random(5).sample(synonym_sets(wordnet), 500) for w in lemmas[:2]]
    assert np.allclose(gpu.embed_names(words), minilm.embed_names(words), atol=1e-4)
    tax = Taxonomy.of(inat_like)
    answers = ["a toucan", "some kind of lily", "an insect on a leaf", "bird", "harlequin blue flag"]
    on_cpu = TaxonomyIndex(tax, MappingConfig(similarity="sentence-transformers"), similarity=minilm).map(answers)
    on_gpu = TaxonomyIndex(tax, MappingConfig(similarity="sentence-transformers"), similarity=gpu).map(answers)
    assert on_cpu.node_idx.tolist() == on_gpu.node_idx.tolist()


def test_the_index_pickles_with_its_embedding_measure(inat_like, minilm):
    import pickle

    ix = TaxonomyIndex(Taxonomy.of(inat_like), MappingConfig(similarity="sentence-transformers"))
    back = pickle.loads(pickle.dumps(ix))
    assert isinstance(back.similarity, SentenceTransformerSimilarity)
    assert back.similarity.model_id == ix.similarity.model_id
    answers = ["a black and yellow toucan", "ant colony", "a succulent with thick leaves", "siberian flag"]
    want = ix.map(answers).node_idx.tolist()
    assert back.map(answers).node_idx.tolist() == want
    # the queries embedded in one batch first (Similarity.prepare): the same nodes
    fresh = TaxonomyIndex(Taxonomy.of(inat_like), MappingConfig(similarity="sentence-transformers"),
                          similarity=SentenceTransformerSimilarity(MINILM, device="cpu"))
    fresh.similarity.prepare([fresh.read(a).query for a in answers])
    assert fresh.map(answers).node_idx.tolist() == want


# ---------------------------------------------------------------------------- end to end
@pytest.mark.parametrize("seed", [0, 1])
def test_synonyms_spelled_differently_map_by_meaning(minilm, wordnet, tmp_path, seed):
    """A tree of WordNet synsets, each node named by one lemma; answers are another lemma of
    the same synset spelled differently (no stage before the similarity can decide). Scored
    end to end (``score_frame``), the embedding measure puts far more of them on their node
    than chance and than the string measure."""
    from taxoforge.scores.readers.files import read_outputs
    from taxoforge.scores.run import score_frame

    pick = random.Random(seed).sample(synonym_sets(wordnet, max_ratio=50), 80)
    rows = [("root", None, "entity")] + [(f"n{i}", "root", lemmas[0]) for i, (_, lemmas) in enumerate(pick)]
    tree = tree_tables(rows, name=f"wordnet-synonyms-{seed}")
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "output": f"{lemmas[1]}", "label": f"n{i}"}) + "\n"
                            for i, (_, lemmas) in enumerate(pick)))
    acc = {}
    for spec in ("ratio", "sentence-transformers"):
        run = score_frame(read_outputs(path), tree, config=MappingConfig(similarity=spec), text_measures=False,
                          ci=None, breakdowns=False)
        s = run.samples
        assert s.height == 80 and run.bad_rows.height == 0
        assert set(s["map_stage"].to_list()) <= {"top1", "vote", "ngram2", "ngram3", "ngram4"}
        acc[spec] = float(s["correct"].mean())
    chance = 1 / len(rows)
    assert acc["sentence-transformers"] >= 0.15 > 6 * chance, acc
    assert acc["sentence-transformers"] >= acc["ratio"] + 0.1, acc
    # the embedding measure's similarities are cosines
    assert ((s["map_similarity"] >= -1.0001) & (s["map_similarity"] <= 1.0001)).all()


def test_the_cli_maps_with_the_pypi_model(minilm, tmp_path, inat_like):
    from click.testing import CliRunner

    from taxoforge.cli import main

    tree_dir = tmp_path / "tree"
    inat_like.write(tree_dir)
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps({"id": str(i), "output": o}) + "\n"
                               for i, o in enumerate(["Aloe vera", "a toco toucan", "a small black insect"])))
    r = CliRunner().invoke(main, ["map", str(answers), str(tree_dir), "--similarity", "sentence-transformers",
                                  "--json", "--no-progress"], env={"TAXOFORGE_DEVICE": "cpu"})
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["info"]["mapped"] == 3
    assert [row["node_id"] for row in doc["rows"][:2]] == ["aloe_vera", "r_toco"]
    assert "sentence-transformers" in json.dumps(doc["info"])


def test_names_may_come_as_an_arrow_array():
    import pyarrow as pa

    names = ["aloe vera", "toco toucan", "ants"]
    sim = EmbeddingSimilarity(trigram_encoder, name="trigram-test")
    assert np.array_equal(sim.embed_names(pa.array(names)), sim.embed_names(names))
    sim.bind(pa.chunked_array([names[:2], names[2:]]))
    assert sim.embeddings.shape == (3, 64)
