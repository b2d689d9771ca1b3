"""A store's catalogue, ``index.json``, and the ``NAME[@VERSION]`` references resolved in it.

``index.json`` lists, per taxonomy, every published version with its creation and
publication times, ``content_sha256``, the SHA-256 of its ``manifest.json`` (so a reader
checks the chain index → manifest → files), row counts, total size, path, provenance
(seed, cycle policy, source versions) and, once known, a summary of what changed from the
version before it (``diff``: counts of nodes added, removed, renamed, moved …).

``public_url``
    Where readers reach the store (the HTTPS address a folder is served at, ``s3://…``,
    ``hf://…``), recorded by a publisher that names it (``taxoforge publish --public-url``,
    ``SnapshotStore(public_url=…)``) and kept by every later write. Citations, the
    catalogue page and the snapshot browser name the store by it; a local store without
    one is cited as a local-only store, never by its path.

``latest``
    What a bare ``NAME`` means. It moves only when asked (``publish(..., latest=True)``,
    ``taxoforge publish --latest``, :meth:`~taxoforge.snapshots.store.SnapshotStore.set_latest`);
    the first version of a taxonomy becomes its latest. Publishing a test build therefore
    never switches what ``NAME`` means. (An index written before ``latest`` was kept, or
    one without the field, falls back to the version created last.)

References
    ``NAME`` (its latest), ``NAME@VERSION`` (a unique prefix of at least 4 characters is
    accepted), and ``sha256:HEX`` or ``NAME@sha256:HEX`` (the content hash, at least 12 hex
    digits): the version of any taxonomy whose ``content_sha256`` starts so — how a score
    of an unpublished tree folder cites it, resolvable once that content is published.

This module only reads and edits the parsed document; :mod:`.store` fetches and writes it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from typing import Any

from taxoforge.snapshots.errors import SnapshotError, SnapshotNotFound
from taxoforge.snapshots.manifest import json_document, validate_name

__all__ = ["INDEX_NAME", "MAX_INDEX_BYTES", "INDEX_FORMAT", "CONTENT_PREFIX", "empty_index", "parse_index", "index_bytes", "index_entry",
           "register", "set_latest", "latest_version", "sorted_versions", "resolve_entry", "parse_ref", "describe_entry",
           "now", "content_ref", "describe_taxonomies", "check_public_url", "public_url_of",
           "record_public_url"]

INDEX_NAME = "index.json"
#: the largest ``index.json`` read (bytes): about 4,000 versions at ~2 KiB each. A store is
#: untrusted input, and a parsed JSON document takes up to ~25 times its size in memory
MAX_INDEX_BYTES = 8 << 20
INDEX_FORMAT = "taxoforge-snapshot-index"
#: ``sha256:HEX`` names a snapshot by its content hash (``content_sha256``)
CONTENT_PREFIX = "sha256:"
_MIN_CONTENT_HEX = 12
_HEX_RE = re.compile(r"[0-9a-f]{12,64}")


def now() -> str:
    """Now, UTC, to the microsecond (publication times).

    Returns
    -------
    str
        Now, UTC, to the microsecond (publication times).
    """
    return _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def content_ref(content_sha256: str) -> str:
    """The reference ``sha256:<hex>`` of a snapshot content hash.

    Parameters
    ----------
    content_sha256 : str
        A content hash, hex.

    Returns
    -------
    str
        The reference ``sha256:<hex>`` of a snapshot content hash.
    """
    return f"{CONTENT_PREFIX}{content_sha256}"


def _content_hex(text: str, ref: str) -> str:
    hexpart = text[len(CONTENT_PREFIX):].lower()
    if not _HEX_RE.fullmatch(hexpart):
        raise SnapshotError(f"bad snapshot reference {ref!r}: expected sha256: and {_MIN_CONTENT_HEX} to 64 "
                            "hex digits of a content hash")
    return hexpart


_PUBLIC_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\x00-\x1f\x7f]+")
_MAX_URL = 2048


def check_public_url(url: str) -> str:
    """``url`` when it can be a store's public address (``scheme://…``, no whitespace or
    control character, at most 2,048 characters); :class:`SnapshotError` otherwise.

    Parameters
    ----------
    url : str
        The address.

    Returns
    -------
    str
        ``url``, unchanged.
    """
    if not isinstance(url, str) or len(url) > _MAX_URL or not _PUBLIC_URL_RE.fullmatch(url):
        raise SnapshotError(f"bad public URL {str(url)[:200]!r}: expected an absolute URL such as "
                            "https://host/snapshots (scheme://…, no spaces)")
    return url


def public_url_of(idx: dict) -> str | None:
    """The public URL a parsed ``index.json`` records, or None (also for a malformed one:
    an index is untrusted input).

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``.

    Returns
    -------
    str or None
        The recorded public URL.
    """
    try:
        return check_public_url(idx["public_url"]) if idx.get("public_url") else None
    except SnapshotError:
        return None


def record_public_url(idx: dict, url: str | None) -> str | None:
    """Record ``url`` (checked by :func:`check_public_url`) as the store's public URL in
    ``idx`` when one is given, and return the public URL ``idx`` then records.

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``, changed in place.
    url : str or None
        The public URL a publisher gave, if any.

    Returns
    -------
    str or None
        The public URL of the store, as the index records it.
    """
    if url:
        idx["public_url"] = check_public_url(url)
    return public_url_of(idx)


def parse_ref(ref: str) -> tuple[str | None, str | None]:
    """``"NAME@VERSION"`` → ``(NAME, VERSION)``; ``"NAME"`` → ``(NAME, None)`` (latest);
    ``"sha256:HEX"`` → ``(None, "sha256:HEX")`` and ``"NAME@sha256:HEX"`` →
    ``(NAME, "sha256:HEX")`` (by content hash).

    Parameters
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.

    Returns
    -------
    tuple[str or None, str or None]
        ``"NAME@VERSION"`` → ``(NAME, VERSION)``; ``"NAME"`` → ``(NAME, None)``
        (latest); ``"sha256:HEX"`` → ``(None, "sha256:HEX")`` and ``"NAME@sha256:HEX"``
        → ``(NAME, "sha256:HEX")`` (by content hash).
    """
    if not isinstance(ref, str) or not ref.strip():
        raise SnapshotError("empty snapshot reference: expected NAME, NAME@VERSION or sha256:HEX")
    ref = ref.strip()
    if ref.startswith(CONTENT_PREFIX):
        return None, CONTENT_PREFIX + _content_hex(ref, ref)
    name, sep, version = ref.partition("@")
    if sep and not version:
        raise SnapshotError(f"bad snapshot reference {ref!r}: expected NAME@VERSION with a version after '@'")
    validate_name(name)
    if version.startswith(CONTENT_PREFIX):
        return name, CONTENT_PREFIX + _content_hex(version, ref)
    if version:
        validate_name(version, "version")
    return name, (version or None)


def empty_index() -> dict:
    """The ``index.json`` of a store with no snapshot yet.

    Returns
    -------
    dict
        The format's header and no taxonomies.
    """
    return {"format": INDEX_FORMAT, "format_version": 1, "updated": None, "taxonomies": {}}


def parse_index(data: bytes, where: str) -> dict:
    """Parse ``index.json`` bytes (at most :data:`MAX_INDEX_BYTES`); errors name ``where``
    and what was expected.

    Parameters
    ----------
    data : bytes
        The bytes.
    where : str
        Where the bytes came from, for messages.

    Returns
    -------
    dict
        The parsed index.
    """
    idx = json_document(data, where, "snapshot index", MAX_INDEX_BYTES,
                        invalid="not valid JSON ({error}); rebuild it with SnapshotStore.reindex()")
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
    """Index entries oldest first (the last one is the latest).

    Parameters
    ----------
    entries : list[dict]
        Index entries of one taxonomy.

    Returns
    -------
    list[dict]
        The entries, oldest first.
    """
    return sorted(entries, key=_sort_key)


def latest_version(tax: dict) -> str | None:
    """The version a bare ``NAME`` means in the index entry ``tax`` of one taxonomy: its
    ``latest`` when set to a listed version, else (an index without the field) the
    version created last.

    Parameters
    ----------
    tax : dict
        One taxonomy's entry of the index.

    Returns
    -------
    str or None
        The version a bare ``NAME`` means in the index entry ``tax`` of one taxonomy:
        its ``latest`` when set to a listed version, else (an index without the field)
        the version created last.
    """
    listed = {e.get("version") for e in tax.get("versions", [])}
    if tax.get("latest") in listed:
        return tax["latest"]
    if "latest" not in tax and tax.get("versions"):
        return sorted_versions(tax["versions"])[-1]["version"]
    return None


def index_bytes(idx: dict) -> bytes:
    """The bytes to store: versions sorted, ``updated`` set, ``latest`` kept (a taxonomy
    whose ``latest`` is unset or names no listed version gets the version created last:
    only an index rebuilt from scratch has none).

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``.

    Returns
    -------
    bytes
        The bytes to store: versions sorted, ``updated`` set, ``latest`` kept (a
        taxonomy whose ``latest`` is unset or names no listed version gets the version
        created last: only an index rebuilt from scratch has none).
    """
    idx["updated"] = now()
    for tax in idx["taxonomies"].values():
        tax["versions"] = sorted_versions(tax["versions"])
        listed = {e["version"] for e in tax["versions"]}
        if tax.get("latest") not in listed:
            tax["latest"] = tax["versions"][-1]["version"] if tax["versions"] else None
    return (json.dumps(idx, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def index_entry(manifest: dict, mbytes: bytes) -> dict:
    """The index entry of a snapshot whose manifest is ``manifest`` (bytes ``mbytes``).

    Parameters
    ----------
    manifest : dict
        The snapshot's manifest.
    mbytes : bytes
        The manifest file's bytes.

    Returns
    -------
    dict
        The index entry of a snapshot whose manifest is ``manifest`` (bytes ``mbytes``).
    """
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
        "seed": manifest.get("seed"),
        "cycle_policy": manifest.get("cycle_policy"),
        "source_versions": manifest.get("source_versions") or {},
    }


def register(idx: dict, manifest: dict, mbytes: bytes, *, latest: bool = False) -> bool:
    """Add ``manifest`` to ``idx`` unless its version is there; True when added. With
    ``latest`` (or when it is the taxonomy's first version) it becomes the latest.

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``, changed in place.
    manifest : dict
        The snapshot's manifest.
    mbytes : bytes
        The manifest file's bytes.
    latest : bool, optional
        Whether the version becomes the latest.

    Returns
    -------
    bool
        Whether it was added.
    """
    tax = idx["taxonomies"].setdefault(manifest["taxonomy"], {"versions": []})
    first = not tax["versions"]
    added = not any(e["version"] == manifest["version"] for e in tax["versions"])
    if added:
        tax["versions"].append(index_entry(manifest, mbytes))
    if latest or first:
        tax["latest"] = manifest["version"]
    elif "latest" not in tax:  # an index from before ``latest`` was kept: pin what it meant
        tax["latest"] = latest_version({"versions": [e for e in tax["versions"] if e["version"] != manifest["version"]]})
    return added


def set_latest(idx: dict, name: str, version: str) -> bool:
    """Make ``name@version`` (listed in ``idx``) the latest; True when that changed it.

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``, changed in place.
    name : str
        The name.
    version : str
        The version.

    Returns
    -------
    bool
        Whether the latest changed.
    """
    tax = idx["taxonomies"][name]
    if tax.get("latest") == version:
        return False
    tax["latest"] = version
    return True


def _by_content(idx: dict, name: str | None, hexpart: str, store: str) -> tuple[str, dict]:
    found = [(n, e) for n, tax in sorted(idx["taxonomies"].items()) if name is None or n == name
             for e in sorted_versions(tax.get("versions", []))
             if str(e.get("content_sha256", "")).startswith(hexpart)]
    if not found:
        where = f"taxonomy {name!r}" if name else "any taxonomy"
        raise SnapshotNotFound(f"store {store}: no version of {where} has content sha256 {hexpart[:16]}…")
    if len({e["content_sha256"] for _, e in found}) > 1:
        refs = ", ".join(f"{n}@{e['version']}" for n, e in found)
        raise SnapshotNotFound(f"store {store}: content hash prefix {hexpart} is ambiguous ({refs})")
    return found[0]


def resolve_entry(idx: dict, ref: str, store: str) -> tuple[str, dict]:
    """``(taxonomy, index entry)`` of a reference (see the module doc) in ``idx``, the
    index of ``store``.

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``.
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    store : str
        The snapshot store.

    Returns
    -------
    tuple[str, dict]
        ``(taxonomy, index entry)`` of a reference (see the module doc) in ``idx``, the
        index of ``store``.
    """
    name, version = parse_ref(ref)
    if version is not None and version.startswith(CONTENT_PREFIX):
        return _by_content(idx, name, version[len(CONTENT_PREFIX):], store)
    tax = idx["taxonomies"].get(name)
    if not tax or not tax.get("versions"):
        raise SnapshotNotFound(f"store {store}: no taxonomy {name!r} (taxonomies: {describe_taxonomies(idx)})")
    entries = sorted_versions(tax["versions"])
    if version is None:
        latest = latest_version(tax)
        if latest is None:
            raise SnapshotNotFound(f"store {store}: taxonomy {name!r} has no latest version; name one "
                                   f"(versions: {', '.join(e['version'] for e in entries)})")
        return name, next(e for e in entries if e["version"] == latest)
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


def describe_taxonomies(idx: dict) -> str:
    """``"imagenet1k (latest imagenet1k@…, 1 version), wordnet (…)"``, or ``"none"``:
    what a store has, for error messages.

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``.

    Returns
    -------
    str
        ``"imagenet1k (latest imagenet1k@…, 1 version), wordnet (…)"``, or ``"none"``:
        what a store has, for error messages.
    """
    parts = []
    for n, tax in sorted(idx["taxonomies"].items()):
        k = len(tax.get("versions", []))
        latest = latest_version(tax)
        parts.append(f"{n} ({'latest ' + n + '@' + latest + ', ' if latest else ''}{k} version{'s' if k != 1 else ''})")
    return ", ".join(parts) or "none"


def describe_entry(name: str, entry: dict, latest: bool = False) -> dict[str, Any]:
    """One row of ``taxoforge list``.

    Parameters
    ----------
    name : str
        The name.
    entry : dict
        The version's index entry.
    latest : bool, optional
        Whether it is the latest of its taxonomy.

    Returns
    -------
    dict[str, Any]
        One row of ``taxoforge list``.
    """
    return {"taxonomy": name, "version": entry["version"], "ref": f"{name}@{entry['version']}",
            "created": entry.get("created"), "published": entry.get("published"),
            "latest": latest, "row_counts": entry.get("row_counts", {}), "size": entry.get("size")}
