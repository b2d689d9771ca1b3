"""docs/security.md stays true: every one of the ten items of the security audit (and each
item added since) has its numbered section naming its regression tests, and every
regression test the document names exists in the test suite."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "security.md"


def _defined_tests() -> set[str]:
    names: set[str] = set()
    for p in (REPO / "tests").rglob("test_*.py"):
        names.update(re.findall(r"^def (test_\w+)\(", p.read_text(encoding="utf-8"), flags=re.M))
    return names


def test_every_audit_item_has_its_section():
    text = DOC.read_text(encoding="utf-8")
    numbers = [int(n) for n in re.findall(r"^\*\*(\d+)\. ", text, flags=re.M)]
    assert len(numbers) >= 10 and numbers == list(range(1, len(numbers) + 1))  # the audit's ten, and later ones
    assert "## What is left to the deployer" in text


def test_every_test_the_document_names_exists():
    named = set(re.findall(r"`(test_\w+)`", DOC.read_text(encoding="utf-8")))
    assert len(named) >= 20
    missing = sorted(named - _defined_tests())
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"


def test_every_audit_item_names_its_regression_tests():
    text = DOC.read_text(encoding="utf-8").split("## What is left to the deployer")[0]
    items = re.split(r"^\*\*(?=\d+\. )", text, flags=re.M)[1:]
    assert len(items) >= 10
    bare = [item.split(".")[0] for item in items if not re.search(r"`test_\w+`", item)]
    assert not bare, f"docs/security.md items without a named regression test: {bare}"
