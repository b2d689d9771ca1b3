"""WordNet 3.0 for NLTK, found or set up: a set-up that just works, or an error that says how.

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

:func:`taxoforge.sources.wordnet_files.wordnet_source_version` says which WordNet files were
read. The noun graph and tree built from them are :mod:`taxoforge.sources.wordnet`'s; this
module needs no tree code, so what only reads WordNet (METEOR's synonyms, the open-world
measures) loads none.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

from taxoforge.files import atomic_directory

__all__ = ["WORDNET_VERSION", "SYSTEM_WORDNET_DIRS", "LEXNAMES", "HOW_TO_GET", "WordNetUnavailable", "ensure_wordnet",
           "lexnames_text", "default_nltk_data_dir", "build_nltk_wordnet"]

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
