"""WordNet 3.0 through NLTK: a set-up that just works, and the noun hypernym graph.

:func:`ensure_wordnet` finds WordNet 3.0 for NLTK in this order:

1. NLTK's data path (``nltk.data.path``, ``$NLTK_DATA``) already has it;
2. a system WordNet (Debian's ``wordnet-base`` + ``wordnet-sense-index`` in
   ``/usr/share/wordnet``) is copied into an NLTK data folder
   (``$TAXOFORGE_NLTK_DATA``, default ``~/.cache/taxoforge/nltk_data``) — NLTK refuses
   corpus roots outside its data path and symlinks, so the files are copied — and the
   ``lexnames`` file Debian lacks is rebuilt from Debian's ``lexnames(5WN)`` man page
   (or, when man pages are not installed, from the 45 names listed here);
3. ``nltk.download("wordnet")``;
4. otherwise :class:`WordNetUnavailable` says how to get it.

:func:`noun_graph` walks all 82,115 noun synsets, with ``hypernyms()`` **and**
``instance_hypernyms()`` edges; node ids are ``wn:n<offset>`` (the ImageNet wnid form).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import polars as pl

from taxoforge.files import atomic_directory, file_sha256
from taxoforge.trees.build import build_tree
from taxoforge.trees.tables import TreeTables

__all__ = [
    "wordnet_tree",
    "WordNetUnavailable",
    "ensure_wordnet",
    "noun_graph",
    "wnid",
    "SYSTEM_WORDNET_DIRS",
    "WORDNET_VERSION",
    "wordnet_source_version",
]

WORDNET_VERSION = "3.0"
SYSTEM_WORDNET_DIRS = (Path("/usr/share/wordnet"), Path("/usr/local/share/wordnet"), Path("/opt/homebrew/share/wordnet"))
LEXNAMES_MAN_PAGES = (Path("/usr/share/man/man5/lexnames.5WN.gz"), Path("/usr/share/man/man5/lexnames.5.gz"))
# The 45 lexicographer file names of WordNet 3.0 in file-number order (lexnames(5WN)).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
_REQUIRED = ("data.noun", "index.noun", "index.sense")

HOW_TO_GET = (
    "WordNet 3.0 is not available to NLTK. Get it in one of these ways:\n"
    "  * Debian/Ubuntu: apt-get install wordnet-base wordnet-sense-index  (taxoforge copies it for NLTK)\n"
    "  * with network:  python -m nltk.downloader wordnet\n"
    "  * or point $NLTK_DATA at a folder holding corpora/wordnet/"
)


class WordNetUnavailable(RuntimeError):
    """WordNet 3.0 could not be found, built or downloaded."""


def wnid(offset: int, pos: str = "n") -> str:
    """The taxoforge node id of a synset: ``wn:n02084071``.

    Parameters
    ----------
    offset : int
        The synset's offset.
    pos : str, optional
        Its part of speech.

    Returns
    -------
    str
        The taxoforge node id of a synset: ``wn:n02084071``.
    """
    return f"wn:{pos}{offset:08d}"


def lexnames_text(man_pages=LEXNAMES_MAN_PAGES) -> str:
    """The ``lexnames`` file NLTK needs: from the man page when present, else the built-in list.

    Parameters
    ----------
    man_pages : optional
        The lexnames man pages to read, first found wins.

    Returns
    -------
    str
        The ``lexnames`` file NLTK needs: from the man page when present, else the
        built-in list.
    """
    for page in man_pages:
        if page.exists():
            rows = []
            with gzip.open(page, "rt", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = re.match(r"^(\d\d)\s+((adj|adv|noun|verb)\.\w+)", line)
                    if m:
                        rows.append(f"{m.group(1)}\t{m.group(2)}\t{_CATEGORY[m.group(3)]}")
            if len(rows) == len(LEXNAMES):
                return "\n".join(rows) + "\n"
    return "".join(f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES))


def default_nltk_data_dir() -> Path:
    """Where taxoforge keeps NLTK's WordNet: ``$TAXOFORGE_NLTK_DATA``, else ``~/.cache/taxoforge/nltk_data``.

    Returns
    -------
    pathlib.Path
        The folder (not created here).
    """
    return Path(os.environ.get("TAXOFORGE_NLTK_DATA", Path.home() / ".cache" / "taxoforge" / "nltk_data"))


def build_nltk_wordnet(system_dir: Path, nltk_data: Path) -> Path:
    """Copy a system WordNet into ``<nltk_data>/corpora/wordnet`` (atomically) and add ``lexnames``.

    Parameters
    ----------
    system_dir : Path
        A system WordNet 3.0 dictionary folder.
    nltk_data : Path
        NLTK's data folder.

    Returns
    -------
    Path
        The corpus folder written.
    """
    target = nltk_data / "corpora" / "wordnet"
    if (target / "lexnames").exists() and all((target / f).exists() for f in _REQUIRED):
        return target
    with atomic_directory(target) as tmp:
        for f in system_dir.iterdir():
            if f.is_file():
                shutil.copyfile(f, tmp / f.name)  # copies through symlinks: NLTK rejects links
        (tmp / "lexnames").write_text(lexnames_text())
    return target


def _load_from_path():
    import nltk
    from nltk.corpus import wordnet

    try:
        wordnet.ensure_loaded()
    except LookupError:
        # a failed lazy load leaves the LazyCorpusLoader usable for the next attempt
        return None
    return wordnet if wordnet.get_version() == WORDNET_VERSION else None


def ensure_wordnet(*, allow_download: bool = True, system_dirs=SYSTEM_WORDNET_DIRS):
    """Return NLTK's WordNet 3.0 corpus reader, setting it up if needed (module docstring).

    Parameters
    ----------
    allow_download : bool, optional
        Whether NLTK may download WordNet when no system copy is found.
    system_dirs : optional
        Where to look for a system WordNet.

    Returns
    -------
    object
        NLTK's WordNet corpus reader.

    Raises
    ------
    WordNetUnavailable
        With instructions, when every way failed.
    """
    import nltk

    wn = _load_from_path()
    if wn is not None:
        return wn
    nltk_data = default_nltk_data_dir()
    for d in system_dirs:
        if all((d / f).exists() for f in _REQUIRED):
            build_nltk_wordnet(d, nltk_data)
            if str(nltk_data) not in nltk.data.path:
                nltk.data.path.insert(0, str(nltk_data))
            wn = _load_from_path()
            if wn is not None:
                return wn
    if allow_download and not os.environ.get("TAXOFORGE_OFFLINE"):
        try:
            if nltk.download("wordnet", download_dir=str(nltk_data), quiet=True, raise_on_error=True):
                if str(nltk_data) not in nltk.data.path:
                    nltk.data.path.insert(0, str(nltk_data))
                wn = _load_from_path()
                if wn is not None:
                    return wn
        except Exception:  # noqa: BLE001 - any failure means: not available this way
            pass
    raise WordNetUnavailable(HOW_TO_GET)


def noun_graph(wn=None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The WordNet noun graph: ``(edges, names)``.

    ``edges``: ``child``, ``parent``, ``relation`` (``hypernym`` | ``instance_hypernym``).
    ``names``: ``node_id``, ``name`` (lemma with spaces), ``kind`` (``lemma``; the first
    lemma also as ``label``; the NLTK synset name ``dog.n.01`` as ``synset``), ``lang``.

    Parameters
    ----------
    wn : optional
        NLTK's WordNet reader (default :func:`ensure_wordnet`).

    Returns
    -------
    tuple[polars.DataFrame, polars.DataFrame]
        The WordNet noun graph: ``(edges, names)``.
    """
    wn = wn or ensure_wordnet()
    child, parent, rel = [], [], []
    n_id, n_name, n_kind = [], [], []
    for s in wn.all_synsets("n"):
        sid = wnid(s.offset())
        # NLTK keeps a synset's pointers in a set (order varies with PYTHONHASHSEED):
        # parents in offset order, so the same WordNet gives the same bytes
        for h in sorted(s.hypernyms(), key=lambda x: x.offset()):
            child.append(sid)
            parent.append(wnid(h.offset()))
            rel.append("hypernym")
        for h in sorted(s.instance_hypernyms(), key=lambda x: x.offset()):
            child.append(sid)
            parent.append(wnid(h.offset()))
            rel.append("instance_hypernym")
        lemmas = [l.replace("_", " ") for l in s.lemma_names()]
        n_id.append(sid)
        n_name.append(lemmas[0])
        n_kind.append("label")
        for lem in lemmas:
            n_id.append(sid)
            n_name.append(lem)
            n_kind.append("lemma")
        n_id.append(sid)
        n_name.append(s.name())
        n_kind.append("synset")
    edges = pl.DataFrame({"child": child, "parent": parent, "relation": rel})
    names = pl.DataFrame({"node_id": n_id, "name": n_name, "kind": n_kind}).with_columns(
        pl.when(pl.col("kind") == "synset").then(None).otherwise(pl.lit("en")).alias("lang")
    ).unique(maintain_order=True)
    return edges, names


def wordnet_tree(edges: pl.DataFrame, names: pl.DataFrame, *, tie_seed: int = 0,
                 cycle_policy: str = "dfs_back_edges", exclude=()):
    """The WordNet noun tree from :func:`noun_graph`'s ``(edges, names)``: the graph→tree step
    (:func:`taxoforge.trees.build.build_tree`, source ``wn``) with WordNet's version recorded.
    The ``wordnet_tree`` asset, the tests and the benchmarks all build it here.

    Parameters
    ----------
    edges : polars.DataFrame
        The edge table (``child``, ``parent``).
    names : polars.DataFrame
        The names table.
    tie_seed : int, optional
        The seed of the tie draws.
    cycle_policy : str, optional
        How cycles are broken (:data:`taxoforge.trees.build.CYCLE_POLICIES`).
    exclude : optional
        Node ids removed with their edges first.

    Returns
    -------
    object
        The WordNet noun tree from :func:`noun_graph`'s ``(edges, names)``: the
        graph→tree step (:func:`taxoforge.trees.build.build_tree`, source ``wn``) with
        WordNet's version recorded.
    """
    build = build_tree(edges, source="wn", tie_seed=tie_seed, cycle_policy=cycle_policy, exclude=exclude)
    return TreeTables.from_build("wordnet", build, names,
                                 info={"source_versions": {"wordnet": WORDNET_VERSION}, "seed": tie_seed,
                                       "cycle_policy": cycle_policy})


def wordnet_source_version(wn=None) -> dict:
    """What identifies the WordNet data the noun graph is read from: the version and the
    SHA-256 of the noun data and index files NLTK reads.

    Parameters
    ----------
    wn : nltk.corpus.reader.WordNetCorpusReader, optional
        The reader (default: :func:`ensure_wordnet` without downloading).

    Returns
    -------
    dict
        ``{"wordnet": "3.0", "data.noun": sha256, "index.noun": sha256, "folder": path}``; the
        same files give the same dict, so a change of the installed data shows as a new
        observed version.
    """
    wn = wn if wn is not None else ensure_wordnet(allow_download=False)
    root = Path(str(wn.root))
    return {"wordnet": wn.get_version(), **{f: file_sha256(root / f) for f in ("data.noun", "index.noun")},
            "folder": str(root)}
