"""index.json and NAME@VERSION references: names and versions from a store are untrusted
input and must follow the id grammar before they touch a path."""

from __future__ import annotations

import json

import pytest

from taxoforge.snapshots.catalogue import INDEX_FORMAT, parse_index, parse_ref, resolve_entry
from taxoforge.snapshots.errors import SnapshotError, SnapshotNotFound


def _index(taxonomies) -> bytes:
    return json.dumps({"format": INDEX_FORMAT, "format_version": 1, "taxonomies": taxonomies}).encode()


def _entry(version, created="2024-01-01T00:00:00Z"):
    return {"version": version, "created": created, "content_sha256": "0" * 64}


@pytest.mark.parametrize("version", ["../../../../escaped", "..", "/etc/cron.d/x", "a/../../b", "v1\n",
                                     "..\\..\\x", "", None, 7, "x" * 101])
def test_an_index_naming_a_version_outside_the_grammar_is_refused(version):
    with pytest.raises(SnapshotError, match=r"index\.json: taxonomy 'demo', versions\[0\]: invalid version"):
        parse_index(_index({"demo": {"versions": [_entry(version)]}}), "http://store/index.json")


@pytest.mark.parametrize("name", ["../escaped", "/abs", ".hidden", "a b"])
def test_an_index_naming_a_taxonomy_outside_the_grammar_is_refused(name):
    with pytest.raises(SnapshotError, match=r"index\.json: invalid taxonomy name"):
        parse_index(_index({name: {"versions": [_entry("v1")]}}), "http://store/index.json")


def test_an_index_of_the_wrong_shape_is_refused_with_its_place():
    with pytest.raises(SnapshotError, match="\"taxonomies\" must be an object"):
        parse_index(_index(["demo"]), "i.json")
    with pytest.raises(SnapshotError, match="taxonomy 'demo' has no \"versions\" list"):
        parse_index(_index({"demo": {"versions": "v1"}}), "i.json")
    with pytest.raises(SnapshotError, match=r"versions\[1\] is not an object"):
        parse_index(_index({"demo": {"versions": [_entry("v1"), "v2"]}}), "i.json")


def test_a_good_index_resolves_latest_exact_and_prefix():
    idx = parse_index(_index({"demo": {"versions": [_entry("aaaa1111"), _entry("bbbb2222", "2025-01-01T00:00:00Z")]}}),
                      "i.json")
    assert resolve_entry(idx, "demo", "s")[1]["version"] == "bbbb2222"
    assert resolve_entry(idx, "demo@aaaa", "s")[1]["version"] == "aaaa1111"
    with pytest.raises(SnapshotNotFound, match="has no version 'cccc'"):
        resolve_entry(idx, "demo@cccc", "s")


def test_a_reference_with_a_path_for_a_version_is_refused():
    with pytest.raises(SnapshotError, match="invalid version '../../x'"):
        parse_ref("demo@../../x")
    assert parse_ref("demo@2024-06") == ("demo", "2024-06")
