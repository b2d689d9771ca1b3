"""How a paper cites a snapshot: BibTeX and CFF for ``NAME@VERSION`` and the sources it was built from.

A snapshot is cited by the **public URL of its store** (where readers pull it), its
``NAME@VERSION`` and its **content hash** (the SHA-256 of its tables, which
``taxoforge verify`` recomputes), together with every upstream source its manifest
records (``source_versions``) with that source's own citation and licence. A store
without a public URL is a folder on one machine: the citation says so instead of naming
a path no reader can open.

The upstream sources, their licences and the works to cite are one table,
:data:`~taxoforge.snapshots.upstreams.UPSTREAMS`.

>>> ref = SnapshotReference("wordnet", "4fb31161dc61", "ab" * 32, "2024-05-01T00:00:00Z",
...                         store="https://example.org/snapshots", source_versions={"wordnet": "3.0"})
>>> print(bibtex(ref).splitlines()[1])
@misc{taxoforge_wordnet_4fb31161dc61,

References
----------
Citation File Format 1.2.0, https://citation-file-format.github.io/ (the keys written by
:func:`cff`). BibTeX field names as biblatex reads them (``url``, ``doi``, ``version``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from taxoforge.latex import latex_escape
from taxoforge.snapshots.catalogue import check_public_url, public_url_of
from taxoforge.snapshots.errors import SnapshotError
from taxoforge.snapshots.upstreams import (
    Upstream,
    licence_summary,
    released_text,
    spdx_licences,
    upstream_key,
    upstreams_of,
    version_text,
)

__all__ = ["SnapshotReference", "reference_from_entry", "bibtex", "cff", "citation_key", "LOCAL_ONLY", "public_address",
           "cite_snapshot", "default_authors", "NOT_PUBLISHED"]

#: what a citation says in place of a store no reader can reach
LOCAL_ONLY = "a local snapshot store with no public URL (readers cannot pull it)"
#: how a citation of such a snapshot begins
NOT_PUBLISHED = "Not published"


@dataclass(frozen=True)
class SnapshotReference:
    """What a citation of one snapshot says.

    Attributes
    ----------
    taxonomy : str
        The taxonomy's name.
    version : str
        The snapshot's version.
    content_sha256 : str
        The content hash of its tables.
    created : str
        When it was built (UTC, ISO 8601).
    store : str or None
        The public URL of its store; None for a store without one (:attr:`local_only`).
    local_only : bool
        The store is a folder with no public URL.
    source_versions : dict
        The upstream source versions the manifest records.
    package : str or None
        The taxoforge version that built it.
    """

    taxonomy: str
    version: str
    content_sha256: str
    created: str = ""
    store: str | None = None
    local_only: bool = False
    source_versions: dict = field(default_factory=dict)
    package: str | None = None

    @property
    def ref(self) -> str:
        """``NAME@VERSION``."""
        return f"{self.taxonomy}@{self.version}"

    @property
    def url(self) -> str | None:
        """The snapshot's folder in the store (None without a public store)."""
        return f"{self.store.rstrip('/')}/{self.taxonomy}/{self.version}/" if self.store else None

    @property
    def year(self) -> str:
        """The year it was built (empty when unknown)."""
        return self.created[:4] if re.match(r"\d{4}", self.created or "") else ""

    @property
    def title(self) -> str:
        """``"wordnet: taxonomy snapshot 4fb31161dc61"``."""
        return f"{self.taxonomy}: taxonomy snapshot {self.version}"

    def pull_command(self) -> str | None:
        """The command that downloads and verifies it.

        Returns
        -------
        str or None
            ``taxoforge pull NAME@VERSION --store URL``; None without a public store.
        """
        import shlex

        return f"taxoforge pull {shlex.quote(self.ref)} --store {shlex.quote(self.store)}" if self.store else None

    def other_sources(self) -> list[str]:
        """Source keys of ``source_versions`` that no upstream source of the table knows.

        Returns
        -------
        list of str
            The keys, sorted.
        """
        return sorted(str(k) for k in (self.source_versions or {}) if not upstream_key(k))


def reference_from_entry(taxonomy: str, entry: dict, *, store: str | None, local_only: bool = False,
                         package: str | None = None) -> SnapshotReference:
    """The :class:`SnapshotReference` of one version from its store index entry.

    Parameters
    ----------
    taxonomy : str
        The taxonomy's name.
    entry : dict
        The version's entry in ``index.json`` (``version``, ``content_sha256``,
        ``created``, ``source_versions``).
    store : str or None
        The store's public URL (None when it has none).
    local_only : bool, optional
        The store is a local folder without a public URL.
    package : str, optional
        The taxoforge version that built it.

    Returns
    -------
    SnapshotReference
        What a citation of that version says.
    """
    sv = entry.get("source_versions")
    return SnapshotReference(taxonomy, str(entry["version"]), str(entry.get("content_sha256") or ""),
                             str(entry.get("created") or ""), store or None, bool(local_only and not store),
                             dict(sv) if isinstance(sv, dict) else {}, package)


def public_address(store, idx: dict | None = None) -> str | None:
    """Where readers reach ``store`` (a :class:`~taxoforge.snapshots.store.SnapshotStore`):
    the public URL it was given, else the one its index records (``idx``, read when not
    given), else the URL of a remote store (``https://…``, ``s3://…``); None for a local
    folder nobody published an address for.

    Parameters
    ----------
    store : SnapshotStore
        The store.
    idx : dict, optional
        Its parsed ``index.json``, when already read.

    Returns
    -------
    str or None
        The address a citation names.
    """
    if store.public_url:
        return check_public_url(store.public_url)
    if idx is None:
        from pathlib import Path

        try:
            idx = {} if store.is_local and not Path(store.root).is_dir() else store.index()
        except SnapshotError:
            idx = {}
    return public_url_of(idx) or (None if store.is_local else store.url)


def cite_snapshot(ref: str, store) -> SnapshotReference:
    """The :class:`SnapshotReference` of ``ref`` (``NAME``, ``NAME@VERSION``, ``sha256:…``)
    in ``store`` (a :class:`~taxoforge.snapshots.store.SnapshotStore`), from its index
    alone (nothing is downloaded but ``index.json``).

    Parameters
    ----------
    ref : str
        The snapshot reference.
    store : SnapshotStore
        The store that holds it.

    Returns
    -------
    SnapshotReference
        What a citation of it says; ``store`` is None (and ``local_only`` true) for a local
        store without a public URL.
    """
    from taxoforge.snapshots.catalogue import resolve_entry, parse_ref

    parse_ref(ref)
    store.require_exists()
    idx = store.index()
    name, entry = resolve_entry(idx, ref, store.url)
    url = public_address(store, idx)
    return reference_from_entry(name, entry, store=url, local_only=url is None)


# ---- BibTeX ---------------------------------------------------------------------------------
def default_authors(ref: SnapshotReference) -> list[str]:
    """Who a snapshot's citation names as its authors when none are given: the organisations
    that made its data (``{iNaturalist}``, ``{Princeton University}`` …), as entities; a
    snapshot of no known source names its taxonomy's maker as unknown.

    Parameters
    ----------
    ref : SnapshotReference
        The snapshot.

    Returns
    -------
    list of str
        Authors as :func:`bibtex` and :func:`cff` take them (``"{Entity}"``).
    """
    orgs = []
    for up, _ in upstreams_of(ref.source_versions):
        if up.organization and "{" + up.organization + "}" not in orgs:
            orgs.append("{" + up.organization + "}")
    return orgs or ["{Unknown: check the sources}"]


def citation_key(ref: SnapshotReference) -> str:
    """The BibTeX key of a snapshot: ``taxoforge_<name>_<version>`` (letters, digits, ``_``).

    Parameters
    ----------
    ref : SnapshotReference
        The snapshot.

    Returns
    -------
    str
        A key BibTeX accepts.
    """
    return re.sub(r"[^A-Za-z0-9_]", "_", f"taxoforge_{ref.taxonomy}_{ref.version}")


def _bib_url(url: str) -> str:
    """A URL safe inside a BibTeX ``url`` or ``doi`` field (read verbatim): braces,
    backslashes, quotes and whitespace percent-encoded, which names the same address."""
    return re.sub(r'[{}\\"\s]', lambda m: "%{:02X}".format(ord(m.group(0))), str(url))


def _bib_text(text: Any) -> str:
    """Text for a BibTeX field: LaTeX-escaped, with braces as ``\\textbraceleft{}`` /
    ``\\textbraceright{}`` (BibTeX counts ``\\{`` as a brace, so an escaped lone brace would
    still end the field)."""
    shielded = str("" if text is None else text).replace("\x00", "").replace("\x01", "")
    shielded = shielded.replace("{", "\x00").replace("}", "\x01")
    return latex_escape(shielded).replace("\x00", "\\textbraceleft{}").replace("\x01", "\\textbraceright{}")


def _bib_authors(authors: list[str]) -> str:
    out = []
    for a in authors:
        if a == "others":
            out.append("others")
        elif a.startswith("{") and a.endswith("}"):
            out.append("{" + _bib_text(a[1:-1]) + "}")
        else:
            out.append(_bib_text(a))
    return " and ".join(out)


def _bib_entry(kind: str, key: str, fields: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in fields)
    body = ",\n".join(f"  {k:<{width}} = {{{v}}}" for k, v in fields if v != "")
    return f"@{kind}{{{key},\n{body},\n}}"


def _release_fields(up: Upstream, versions: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    """Fields naming the release used, from the recorded source versions."""
    text = "; ".join(f"{k}: {version_text(v)}" for k, v in versions if version_text(v))
    fields = [("note", _bib_text(f"Release used: {text}; {released_text(up, versions)}. "
                                 f"Licence: {up.licence} ({up.licence_url})." + (f" {up.note}" if up.note else "")))]
    return fields


def _work_bibtex(work: dict, up: Upstream, versions: list[tuple[str, Any]], first: bool) -> str:
    kind = "misc" if work["type"] == "software" else work["type"]  # classic BibTeX has no @software
    fields: list[tuple[str, str]] = [("author", _bib_authors(work["author"])), ("title", "{" + _bib_text(work["title"]) + "}")]
    release = next((v for _k, v in versions if isinstance(v, dict)), None) if up.key == "col" else None
    if release:  # the COL release actually read: its title, version and date
        if release.get("title"):
            fields[1] = ("title", "{" + _bib_text(release["title"]) + "}")
        if release.get("version"):
            fields.append(("version", _bib_text(release["version"])))
        if release.get("issued"):
            fields.append(("year", _bib_text(str(release["issued"])[:4])))
        if release.get("doi"):
            fields.append(("doi", _bib_url(str(release["doi"]).removeprefix("https://doi.org/"))))
    for k in ("journal", "booktitle", "volume", "number", "pages", "publisher", "address", "year", "doi"):
        if work.get(k) and not any(f == k for f, _ in fields):
            fields.append((k, _bib_url(work[k]) if k == "doi" else _bib_text(work[k])))
    url = (release or {}).get("url") or work.get("url")
    if url:
        fields.append(("url", _bib_url(url)))
    if first:
        fields += _release_fields(up, versions)
    elif work.get("license"):
        fields.append(("note", _bib_text(f"Licence: {work['license']}.")))
    return _bib_entry(kind, work["key"], fields)


def bibtex(ref: SnapshotReference, authors: list[str] | None = None) -> str:
    """BibTeX for a snapshot and for every upstream source it was built from.

    The snapshot's entry (``@misc``) gives the store's public URL (or says the store has
    none), the version, the content hash and the licences; each upstream work follows as
    its own entry, the first of each source noting the release used and its licence.

    Parameters
    ----------
    ref : SnapshotReference
        The snapshot.
    authors : list of str, optional
        Authors of the snapshot (``"Family, Given"`` or ``"{Entity}"``); default the
        organisations that made its data (:func:`default_authors`).

    Returns
    -------
    str
        The BibTeX entries, separated by blank lines.
    """
    ups = upstreams_of(ref.source_versions)
    sources = ", ".join(u.name for u, _ in ups) + (", " if ups and ref.other_sources() else "") \
        + ", ".join(ref.other_sources())
    note = (f"taxoforge snapshot {ref.ref}; content SHA-256 {ref.content_sha256}"
            + (f"; built from {sources}" if sources else "")
            + (f"; download and verify with: {ref.pull_command()}" if ref.store else f"; held in {LOCAL_ONLY}")
            + f"; built with taxoforge{' ' + ref.package if ref.package else ''}"
            + f". Sources, their releases and licences: {licence_summary(ref.source_versions)}.")
    fields = [("author", _bib_authors(authors or default_authors(ref))),
              ("title", "{" + _bib_text(ref.title) + "}"),
              ("year", ref.year), ("version", _bib_text(ref.version))]
    if ref.created[:10]:
        fields.append(("date", _bib_text(ref.created[:10])))
    if ref.store:
        fields += [("howpublished", _bib_text(f"Snapshot store {ref.store}")), ("url", _bib_url(ref.url))]
    else:
        fields.append(("howpublished", _bib_text(f"{NOT_PUBLISHED}: held in {LOCAL_ONLY}")))
    fields.append(("note", _bib_text(note)))
    # no "@" outside an entry: BibTeX reads one anywhere as the start of an entry
    head = f"% Snapshot {ref.taxonomy}, version {ref.version}: cite it and the sources it was built from"
    if not ref.store:
        head += f"\n% WARNING: {LOCAL_ONLY}; publish it to a public store (taxoforge publish --public-url URL)"
    entries = [head + "\n" + _bib_entry("misc", citation_key(ref), fields)]
    for up, versions in ups:
        for i, work in enumerate(up.works):
            entries.append(_work_bibtex(work, up, versions, first=i == 0))
    return "\n\n".join(entries) + "\n"


# ---- CFF ------------------------------------------------------------------------------------
_YAML_ESC = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def _q(text: Any) -> str:
    """A YAML double-quoted scalar: backslash, quote and every control or special-space
    character escaped, the rest as is (UTF-8)."""
    out = []
    for ch in str(text):
        if ch in _YAML_ESC:
            out.append(_YAML_ESC[ch])
        elif (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or ch in "\u2028\u2029\ufeff\ufffe\uffff"
              or 0xD800 <= ord(ch) <= 0xDFFF):  # outside YAML's printable set (1.2, §5.1): escaped
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _cff_person(author: str, indent: str) -> list[str]:
    if author.startswith("{") and author.endswith("}") or "," not in author:
        return [f"{indent}- name: {_q(author.strip('{}'))}"]
    family, given = (s.strip() for s in author.split(",", 1))
    return [f"{indent}- family-names: {_q(family)}", f"{indent}  given-names: {_q(given)}"]


_CFF_TYPES = {"article": "article", "inproceedings": "conference-paper", "book": "book", "software": "software",
              "misc": "database"}


def _cff_work(work: dict, up: Upstream, versions: list[tuple[str, Any]], first: bool) -> list[str]:
    lines = [f"  - type: {_CFF_TYPES.get(work['type'], 'generic')}", f"    title: {_q(work['title'])}", "    authors:"]
    for a in work["author"]:
        if a != "others":
            lines += _cff_person(a, "      ")
    release = next((v for _k, v in versions if isinstance(v, dict)), None) if up.key == "col" and first else None
    for k, key in (("journal", "journal"), ("booktitle", "collection-title"), ("volume", "volume"),
                   ("number", "issue"), ("publisher", "publisher")):
        if work.get(k):
            lines += [f"    {key}:", f"      name: {_q(work[k])}"] if key == "publisher" else [f"    {key}: {_q(work[k])}"]
    if work.get("pages"):
        start, _, end = work["pages"].partition("--")
        lines += [f"    start: {_q(start)}"] + ([f"    end: {_q(end)}"] if end else [])
    year = (str((release or {}).get("issued") or "")[:4]) or work.get("year")
    if year and year.isascii() and year.isdigit():  # "²⁰²⁴" is digits to isdigit, not to int
        lines.append(f"    year: {int(year)}")
    if (release or {}).get("version"):
        lines.append(f"    version: {_q(release['version'])}")
    doi = (release or {}).get("doi") or work.get("doi")
    if doi:
        lines.append(f"    doi: {_q(str(doi).removeprefix('https://doi.org/'))}")
    url = (release or {}).get("url") or work.get("url")
    if url:
        lines.append(f"    url: {_q(url)}")
    if first and up.spdx:
        lines.append(f"    license: {_q(up.spdx)}")
    elif work.get("license"):
        lines.append(f"    license: {_q(work['license'])}")
    if first:
        text = "; ".join(f"{k}: {version_text(v)}" for k, v in versions if version_text(v))
        when = released_text(up, versions)
        lines.append(f"    notes: {_q(f'Release used: {text}; {when}. Licence: {up.licence} ({up.licence_url}). {up.note}'.strip())}")
    return lines


def cff(ref: SnapshotReference, authors: list[str] | None = None) -> str:
    """A ``CITATION.cff`` (Citation File Format 1.2.0) for a snapshot: the snapshot as a
    dataset (store URL, version, content hash as an identifier, licence when a single
    upstream source gives one) and every upstream work under ``references``.

    Parameters
    ----------
    ref : SnapshotReference
        The snapshot.
    authors : list of str, optional
        Authors of the snapshot (``"Family, Given"`` or ``"{Entity}"``); default the
        organisations that made its data (:func:`default_authors`).

    Returns
    -------
    str
        The YAML document.
    """
    ups = upstreams_of(ref.source_versions)
    lines = [f"# {ref.ref}: cite this snapshot and the sources it was built from (references)"]
    if not ref.store:
        lines.append(f"# WARNING: {LOCAL_ONLY}; publish it to a public store (taxoforge publish --public-url URL)")
    lines += ["cff-version: 1.2.0",
              f"message: {_q('If you use this taxonomy snapshot, please cite it and the sources it was built from.')}",
              "type: dataset", f"title: {_q(ref.title)}", f"version: {_q(ref.version)}"]
    if re.match(r"\d{4}-\d{2}-\d{2}", ref.created or ""):
        lines.append(f"date-released: {_q(ref.created[:10])}")
    lines.append("authors:")
    for a in authors or default_authors(ref):
        lines += _cff_person(a, "  ")
    lines += ["identifiers:", "  - type: other", f"    value: {_q('sha256:' + ref.content_sha256)}",
              f"    description: {_q('SHA-256 of the snapshot tables (taxoforge verify recomputes it)')}"]
    if ref.store:
        lines += ["  - type: url", f"    value: {_q(ref.url)}", f"    description: {_q('the snapshot in its store')}",
                  f"url: {_q(ref.url)}", f"repository: {_q(ref.store)}"]
    # the licences the sources state (SPDX), and the page of one whose data states none
    spdx, licence_url = spdx_licences(ref.source_versions)
    if len(spdx) == 1:
        lines.append(f"license: {_q(spdx[0])}")
    elif spdx:
        lines += ["license:"] + [f"  - {_q(x)}" for x in spdx]
    if licence_url:
        lines.append(f"license-url: {_q(licence_url)}")
    abstract = (f"The taxonomy {ref.taxonomy} frozen by taxoforge as snapshot {ref.ref} (content SHA-256 "
                f"{ref.content_sha256}), " + (f"published in the store {ref.store}; pull it with: {ref.pull_command()}."
                                               if ref.store else f"{NOT_PUBLISHED.lower()}: held in {LOCAL_ONLY}.")
                + f" Sources, their releases and licences: {licence_summary(ref.source_versions)}.")
    lines.append(f"abstract: {_q(abstract)}")
    lines += ["keywords:", f"  - {_q('taxonomy')}", f"  - {_q('taxoforge')}", f"  - {_q(ref.taxonomy)}"]
    if ups:
        lines.append("references:")
        for up, versions in ups:
            for i, work in enumerate(up.works):
                lines += _cff_work(work, up, versions, first=i == 0)
    return "\n".join(lines) + "\n"
