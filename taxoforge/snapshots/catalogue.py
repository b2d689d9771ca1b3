"""A store's catalogue, ``index.json``, and the ``NAME[@VERSION]`` references resolved in it.

``index.json`` lists, per taxonomy, every published version with its creation and
publication times, ``content_sha256``, the SHA-256 of its ``manifest.json`` (so a reader
checks the chain index → manifest → files), row counts, total size and path. The latest
version of a taxonomy is the one created last (ties: published last).

This module only reads and edits the parsed document; :mod:`.store` fetches and writes it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from typing import Any

from taxoforge.snapshots.errors import SnapshotError, SnapshotNotFound
from taxoforge.snapshots.manifest import validate_name

__all__ = ["INDEX_NAME", "INDEX_FORMAT", "empty_index", "parse_index", "index_bytes", "index_entry", "register",
           "sorted_versions", "resolve_entry", "parse_ref", "describe_entry", "now"]

INDEX_NAME = "index.json"
INDEX_FORMAT = "taxoforge-snapshot-index"


def now() -> str:
    """Now, UTC, to the microsecond (publication times)."""
    return _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_ref(ref: str) -> tuple[str, str | None]:
    """``"NAME@VERSION"`` → ``(NAME, VERSION)``; ``"NAME"`` → ``(NAME, None)`` (latest)."""
    if not isinstance(ref, str) or not ref.strip():
        raise SnapshotError("empty snapshot reference: expected NAME or NAME@VERSION")
    name, sep, version = ref.strip().partition("@")
    if sep and not version:
        raise SnapshotError(f"bad snapshot reference {ref!r}: expected NAME@VERSION with a version after '@'")
    validate_name(name)
    if version:
        validate_name(version, "version")
    return name, (version or None)


def empty_index() -> dict:
    return {"format": INDEX_FORMAT, "format_version": 1, "updated": None, "taxonomies": {}}


def parse_index(data: bytes, where: str) -> dict:
    """Parse ``index.json`` bytes; errors name ``where`` and what was expected."""
    try:
        idx = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SnapshotError(f"{where}: not valid JSON ({e}); rebuild it with SnapshotStore.reindex()") from e
    if not isinstance(idx, dict) or idx.get("format") != INDEX_FORMAT:
        raise SnapshotError(f"{where}: not a taxoforge snapshot index (expected \"format\": \"{INDEX_FORMAT}\")")
    _check_ids(idx, where)
    return idx


def _check_ids(idx: dict, where: str) -> None:
    """Every taxonomy name and version in ``idx`` follows the id grammar
    (:func:`~taxoforge.snapshots.manifest.validate_name`) before any of them becomes part
    of a path: a store is untrusted input (a hostile or tampered ``index.json`` could name
    ``../../…``)."""
    taxonomies = idx.get("taxonomies")
    if not isinstance(taxonomies, dict):
        raise SnapshotError(f"{where}: \"taxonomies\" must be an object of taxonomy name → versions")
    for name, tax in taxonomies.items():
        try:
            validate_name(name)
        except SnapshotError as e:
            raise SnapshotError(f"{where}: {e}; this store cannot be used") from None
        versions = tax.get("versions") if isinstance(tax, dict) else None
        if not isinstance(versions, list):
            raise SnapshotError(f"{where}: taxonomy {name!r} has no \"versions\" list")
        for i, entry in enumerate(versions):
            if not isinstance(entry, dict):
                raise SnapshotError(f"{where}: taxonomy {name!r}, versions[{i}] is not an object")
            try:
                validate_name(entry.get("version"), "version")
            except SnapshotError as e:
                raise SnapshotError(f"{where}: taxonomy {name!r}, versions[{i}]: {e}; this store cannot be used") from None


def _sort_key(entry: dict) -> tuple:
    return (entry.get("created") or "", entry.get("published") or "", entry.get("version") or "")


def sorted_versions(entries: list[dict]) -> list[dict]:
    """Index entries oldest first (the last one is the latest)."""
    return sorted(entries, key=_sort_key)


def index_bytes(idx: dict) -> bytes:
    """The bytes to store: versions sorted, ``latest`` and ``updated`` set."""
    idx["updated"] = now()
    for tax in idx["taxonomies"].values():
        tax["versions"] = sorted_versions(tax["versions"])
        tax["latest"] = tax["versions"][-1]["version"] if tax["versions"] else None
    return (json.dumps(idx, indent=2, sort_keys=True) + "\n").encode()


def index_entry(manifest: dict, mbytes: bytes) -> dict:
    """The index entry of a snapshot whose manifest is ``manifest`` (bytes ``mbytes``)."""
    name, version = manifest["taxonomy"], manifest["version"]
    return {
        "version": version,
        "created": manifest["created"],
        "published": now(),
        "content_sha256": manifest["content_sha256"],
        "manifest_sha256": hashlib.sha256(mbytes).hexdigest(),
        "row_counts": manifest["row_counts"],
        "size": int(sum(f.get("size", 0) for f in manifest["files"].values())),
        "path": f"{name}/{version}",
    }


def register(idx: dict, manifest: dict, mbytes: bytes) -> bool:
    """Add ``manifest`` to ``idx`` unless its version is there; True when added."""
    tax = idx["taxonomies"].setdefault(manifest["taxonomy"], {"versions": []})
    if any(e["version"] == manifest["version"] for e in tax["versions"]):
        return False
    tax["versions"].append(index_entry(manifest, mbytes))
    return True


def resolve_entry(idx: dict, ref: str, store: str) -> tuple[str, dict]:
    """``(taxonomy, index entry)`` of ``"NAME"`` (latest) or ``"NAME@VERSION"`` (a unique
    prefix of at least 4 characters is accepted) in ``idx``, the index of ``store``."""
    name, version = parse_ref(ref)
    tax = idx["taxonomies"].get(name)
    if not tax or not tax.get("versions"):
        known = ", ".join(sorted(idx["taxonomies"])) or "none"
        raise SnapshotNotFound(f"store {store}: no taxonomy {name!r} (taxonomies: {known})")
    entries = sorted_versions(tax["versions"])
    if version is None:
        return name, entries[-1]
    exact = [e for e in entries if e["version"] == version]
    if exact:
        return name, exact[0]
    pref = [e for e in entries if len(version) >= 4 and e["version"].startswith(version)]
    if len(pref) == 1:
        return name, pref[0]
    if len(pref) > 1:
        raise SnapshotNotFound(f"store {store}: version prefix {version!r} of {name!r} is ambiguous "
                               f"({', '.join(e['version'] for e in pref)})")
    avail = ", ".join(e["version"] for e in entries)
    raise SnapshotNotFound(f"store {store}: taxonomy {name!r} has no version {version!r} (versions: {avail})")


def describe_entry(name: str, entry: dict, latest: bool = False) -> dict[str, Any]:
    """One row of ``taxoforge list``."""
    return {"taxonomy": name, "version": entry["version"], "ref": f"{name}@{entry['version']}",
            "created": entry.get("created"), "published": entry.get("published"),
            "latest": latest, "row_counts": entry.get("row_counts", {}), "size": entry.get("size")}
