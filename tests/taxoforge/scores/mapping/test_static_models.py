"""The static model distilled from the packaged all-MiniLM-L6-v2 (``minilm-static``): what a
text's embedding is, the word-by-word shortcut, the cached folder and its stamp, and the
measure in the mapping (the ``embeddings`` extra; skipped, naming the package, without it)."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.embedding_measures import (
    MINILM_STATIC,
    StaticEmbeddingSimilarity,
    similarity_from_spec,
    sentence_transformer_similarity,
    similarity_record,
)
from taxoforge.scores.mapping.sentence_models import MODEL_STAMP, ModelPackageMissing, model_id_of, minilm_folder
from taxoforge.scores.mapping.static_models import STATIC_RECIPE, StaticModel, _stamp_ok, static_model_folder
from tests.conftest import minilm_or_skip
from tests.taxoforge.scores.conftest import mapped

TEXTS = ["Quercus ilex", "holm oak", "golden retriever", "a photo of a golden retriever dog", "",
         "Grand Café de l'Ærø", "great\twhite\u00a0shark", "tabby cat", "ZZZZ qqqq", "oak", "Oak!"]


@pytest.fixture(scope="module")
def static():
    try:
        return similarity_from_spec(MINILM_STATIC)
    except ModelPackageMissing as e:
        pytest.skip(str(e))


def test_a_text_is_the_unit_mean_of_its_token_vectors(static):
    """Independently of the encoder's word-by-word shortcut: the tokenizer's tokens of the
    whole text, their rows of the vector table summed and scaled to unit length."""
    model = static.static
    got = model.encode(TEXTS)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), model.dimensions)
    for text, row in zip(TEXTS, got):
        ids = model.tokenizer.encode(text, add_special_tokens=False).ids
        want = model.vectors[ids].astype(np.float64).sum(axis=0)
        norm = np.linalg.norm(want)
        if norm == 0:
            assert not row.any(), text  # no known token: a zero row
        else:
            np.testing.assert_allclose(row, want / norm, atol=1e-5, err_msg=text)


def test_word_by_word_equals_whole_texts(static):
    model = static.static
    assert model.by_words  # BERT's tokenizer breaks at every space first
    rng = np.random.default_rng(0)
    words = ["Passer", "domesticus", "house", "sparrow", "café", "naïve", "x-ray", "U.S.", "2nd", "😀", "a"]
    texts = [" ".join(rng.choice(words, n)) for n in rng.integers(0, 7, 300)] + TEXTS
    by_words = model.encode(texts)
    model.by_words = False
    try:
        whole = model.encode(texts)
    finally:
        model.by_words = True
    np.testing.assert_allclose(by_words, whole, atol=2e-6)


def test_the_distilled_model_knows_meaning(static):
    """Names of the same thing score above unrelated names (what the string measure cannot
    see: no shared letters)."""
    pairs = [("dog", "puppy"), ("oak", "tree"), ("shark", "fish"), ("sparrow", "bird"), ("car", "automobile"),
             ("kitten", "cat"), ("ocean", "sea"), ("rose", "flower")]
    left = static.static.encode([a for a, _ in pairs])
    right = static.static.encode([b for _, b in pairs])
    S = left @ right.T
    assert np.all(np.diag(S)[:, None] > S - np.eye(len(pairs)) * 2)  # each pair beats every other pairing


def test_the_folder_is_cached_stamped_and_distilled_again_when_damaged(static):
    folder = static.folder
    stamp = json.loads((folder / MODEL_STAMP).read_text())
    assert stamp["recipe"] == STATIC_RECIPE and stamp["source_model_id"] == model_id_of(minilm_folder())
    assert static_model_folder() == folder  # found, not distilled again
    assert static.model_id == stamp["model_id"] != static.source_model_id
    assert not _stamp_ok(folder, stamp["source_model_id"], {**STATIC_RECIPE, "dims": 8})  # a new recipe: a new folder
    assert not _stamp_ok(folder, "0" * 16, STATIC_RECIPE)
    with pytest.raises(ValueError, match="pool by the mean"):
        static_model_folder(recipe={**STATIC_RECIPE, "pooling": "max"})


def test_a_damaged_copy_is_rejected(static, tmp_path):
    import shutil

    copy = tmp_path / static.folder.name
    shutil.copytree(static.folder, copy)
    stamp = json.loads((copy / MODEL_STAMP).read_text())
    assert _stamp_ok(copy, stamp["source_model_id"], stamp["recipe"])
    with open(copy / "vectors.npy", "ab") as f:
        f.write(b"\0")
    assert not _stamp_ok(copy, stamp["source_model_id"], stamp["recipe"])
    assert StaticModel(static.folder).vectors.shape == static.static.vectors.shape


def test_the_measure_maps_pickles_and_is_recorded(static, inat_like):
    ix = TaxonomyIndex(inat_like.taxonomy(), MappingConfig(similarity=MINILM_STATIC), similarity=static)
    assert ix.similarity.name == MINILM_STATIC
    assert mapped(ix, "Aloe vera")[0] == "aloe_vera"
    again = pickle.loads(pickle.dumps(static))
    assert isinstance(again, StaticEmbeddingSimilarity) and again.model_id == static.model_id
    rec = similarity_record(static)
    assert rec == {"name": MINILM_STATIC, "model_id": static.model_id, "precision": "fp32",
                   "dimensions": STATIC_RECIPE["dims"], "device": static.device,
                   "source_model_id": static.source_model_id}
    assert similarity_record(similarity_from_spec("ratio")) is None


def test_the_sentence_model_record_names_its_precision():
    minilm = minilm_or_skip("cpu")
    rec = similarity_record(minilm)
    assert rec["precision"] == "fp32" and rec["model_id"] == minilm.model_id and rec["dimensions"] == 384
    with pytest.raises(ValueError, match="precision must be one of"):
        sentence_transformer_similarity("minilm", precision="fp8")


def test_a_run_records_the_static_model(static, inat_like, tmp_path):
    from taxoforge.scores.map_outputs import map_frame
    from taxoforge.scores.readers.files import read_outputs

    f = tmp_path / "answers.csv"
    f.write_text("qid,pred\n1,Toco Toucan\n2,a toucan on a branch\n")
    rows = read_outputs(f, columns={"id": "qid", "output": "pred"}, require=("output",))
    index = TaxonomyIndex(inat_like.taxonomy(), MappingConfig(similarity=MINILM_STATIC), similarity=static)
    res = map_frame(rows, inat_like, index=index, config=index.config)
    assert res.info["similarity"] == MINILM_STATIC
    assert res.info["similarity_model"] == similarity_record(static)
    assert res.table["node_id"].to_list()[0] == "r_toco"


def test_the_static_measure_needs_no_torch_to_load_and_encode(static):
    """A table look-up: loading the cached model and embedding names imports no torch (seconds
    of import on a machine without a GPU driver)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    if Path("/dev/nvidiactl").exists():
        pytest.skip("an NVIDIA driver is present: 'auto' asks torch for the GPU")
    code = ("import sys; from taxoforge.scores.mapping.embedding_measures import similarity_from_spec; "
            "s = similarity_from_spec('minilm-static'); e = s.embed_names(['holm oak', 'Quercus ilex']); "
            "print(s.device, e.shape, 'torch' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "TAXOFORGE_DEVICE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "False" and out.stdout.startswith("cpu")


def test_a_stored_index_keeps_the_static_embeddings_beside_it(static, tmp_path):
    """Cached like the sentence model's: the names embedded once per tree and stored beside the
    index under the static model's id; a second open reads them, memory-mapped."""
    from taxoforge.scores.mapping.sentence_models import NAME_EMBEDDINGS
    from taxoforge.scores.mapping.store import HEADER
    from tests.taxoforge.scores.conftest import INAT_LIKE, INAT_LIKE_NAMES, tree_tables
    from tests.taxoforge.scores.mapping.test_store import _written

    folder = _written(tree_tables(INAT_LIKE, INAT_LIKE_NAMES, name="inat_like"), tmp_path / "tree")
    config = MappingConfig(similarity=MINILM_STATIC)
    first = TaxonomyIndex.open(folder, config, progress=False)
    emb_dir = first.store.path.with_name(f"{first.store.path.name}.emb-{static.model_id}")
    assert (emb_dir / "embeddings.npy").is_file() and (emb_dir / HEADER).is_file()
    NAME_EMBEDDINGS.clear()
    second = TaxonomyIndex.open(folder, config, progress=False)
    assert isinstance(second.similarity.embeddings, np.memmap) or isinstance(second.similarity.embeddings.base, np.memmap)
    texts = ["a tabby cat", "maybe an aloe plant", "Toco Toucan"]
    assert second.map(texts).node_idx.tolist() == first.map(texts).node_idx.tolist()


def test_without_the_tokenizers_library_the_error_says_what_to_install(static, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tokenizers", None)  # as if not installed
    with pytest.raises(ModelPackageMissing, match="tokenizers.*taxoforge\\[embeddings\\]"):
        StaticModel(static.folder)
