"""Shared fixtures. Reference data is read from ``../shared/data`` (or ``$TAXOFORGE_SHARED_DATA``);
tests that need it skip cleanly when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Nothing in the tests may reach outside the machine: no NLTK downloads, no public endpoints.
os.environ.setdefault("TAXOFORGE_OFFLINE", "1")
# Stored mapping indexes of in-memory trees go to a folder of this test session, never the user's cache.
if "TAXOFORGE_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["TAXOFORGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="taxoforge-test-cache-")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TAXOFORGE_SHARED_DATA", REPO.parent / "shared" / "data"))


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
