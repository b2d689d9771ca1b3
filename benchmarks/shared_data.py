"""Where the benchmarks find the shared reference data: the tests' convention
(``tests/conftest.py``) — ``$TAXOFORGE_SHARED_DATA``, else ``../shared/data`` beside the
repository. A benchmark that needs a file which is absent reports its part as skipped with
the path it looked for; nothing is ever downloaded, and nothing of it is copied into the
repository."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SHARED_DATA", "shared_path", "missing"]

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TAXOFORGE_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_path(*parts: str) -> Path | None:
    """The shared file or folder ``parts`` under :data:`SHARED_DATA`, or None when absent."""
    p = SHARED_DATA.joinpath(*parts)
    return p if p.exists() else None


def missing(*parts: str) -> str:
    """The reason a part is skipped when ``parts`` is absent."""
    return f"reference data not found: {SHARED_DATA.joinpath(*parts)}"
