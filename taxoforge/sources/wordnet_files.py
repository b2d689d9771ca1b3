"""WordNet's noun synsets read straight from its database files, without NLTK.

The noun graph, its tree and the English names of taxa need, of WordNet 3.0, only the noun
synsets: each one's offset, lemmas, NLTK-style name (``dog.n.01``) and semantic pointers
(hypernyms, instance hypernyms, member meronyms). NLTK's reader gives them too, but importing
NLTK and loading its reader cost seconds before the first synset, and its Python objects
several more for the 82,115 nouns. :func:`wordnet_nouns` parses ``data.noun`` and
``index.noun`` in the format of Princeton's ``wndb(5WN)`` manual page — the one NLTK's
``WordNetCorpusReader`` reads — and gives the same synsets, names and pointers (a test checks
every noun synset against NLTK's).

**Format** (``wndb(5WN)``). ``data.noun``: license lines start with two spaces; every other
line is ``synset_offset lex_filenum ss_type w_cnt word lex_id [word lex_id …] p_cnt [ptr …]
| gloss``, with ``w_cnt`` two hexadecimal digits, ``lex_id`` one, ``p_cnt`` three decimal
digits, and each pointer ``pointer_symbol synset_offset pos source/target`` — ``0000`` for a
pointer between synsets, else between two of their words. ``index.noun``: ``lemma pos
synset_cnt p_cnt [ptr_symbol …] sense_cnt tagsense_cnt synset_offset [synset_offset …]``, the
offsets in sense order. NLTK names a synset after its first lemma, lower-cased, and that
lemma's sense number: the synset's position in the lemma's offsets.

**Where** (:func:`wordnet_folder`): the first ``corpora/wordnet`` folder holding WordNet 3.0
on NLTK's data path (``$NLTK_DATA``, ``~/nltk_data``, the folders under ``sys.prefix`` and
``/usr``: :func:`nltk_data_path`, NLTK's own order), then taxoforge's copy for NLTK
(:func:`~taxoforge.sources.wordnet_data.default_nltk_data_dir`), then a system WordNet
(Debian's ``wordnet-base``, read where it is: nothing is copied); else NLTK's set-up
(:func:`~taxoforge.sources.wordnet_data.ensure_wordnet`, which may download).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from taxoforge.files import file_sha256
from taxoforge.sources.wordnet_data import (SYSTEM_WORDNET_DIRS, WORDNET_VERSION, WordNetUnavailable,
                                            default_nltk_data_dir, ensure_wordnet)

__all__ = ["NounSynset", "WordNetNouns", "wordnet_nouns", "wordnet_folder", "wordnet_source_version",
           "POS_FILES", "wordnet_version", "index_offsets", "synset_lemma_names", "exception_list", "nltk_data_path", "MalformedWordNet",
           "HYPERNYM", "INSTANCE_HYPERNYM", "MEMBER_MERONYM"]

HYPERNYM, INSTANCE_HYPERNYM, MEMBER_MERONYM = "@", "@i", "%m"
#: part of speech → the suffix of its files (``data.noun``, ``index.noun``, ``noun.exc``)
POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_VERSION = re.compile(r"Word[nN]et (\d+|\d+\.\d+) Copyright")
# a lemma's syntactic marker, "(a)", "(p)", "(ip)", as NLTK strips it
_SYNTACTIC_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")


class MalformedWordNet(ValueError):
    """A WordNet database file that does not follow ``wndb(5WN)``; names the file and line."""


@dataclass(frozen=True, slots=True)
class NounSynset:
    """One noun synset of WordNet.

    Attributes
    ----------
    offset : int
        Byte offset of its line in ``data.noun`` (the ``n%08d`` of a wnid).
    name : str
        NLTK's name: first lemma, lower-cased, ``.n.``, its two-digit sense number.
    lemma_names : tuple of str
        Its lemmas in file order, underscores kept (as NLTK's ``lemma_names()``).
    pointer_fields : str
        Its pointers as written, ``symbol offset pos source/target`` each (read by
        :meth:`related`).
    """

    offset: int
    name: str
    lemma_names: tuple[str, ...]
    pointer_fields: str

    def related(self, symbol: str) -> tuple[int, ...]:
        """Offsets of the noun synsets ``symbol`` points to (``@`` hypernyms, ``@i``
        instance hypernyms, ``%m`` member meronyms …), ascending, each once: pointers between
        synsets only (``source/target`` ``0000``), as NLTK's synset relations.

        Parameters
        ----------
        symbol : str
            A ``wndb(5WN)`` pointer symbol.

        Returns
        -------
        tuple of int
        """
        if symbol not in self.pointer_fields:
            return ()
        return tuple(sorted({int(x) for x in _pointer_pattern(symbol).findall(self.pointer_fields)}))


@lru_cache(maxsize=64)
def _pointer_pattern(symbol: str) -> re.Pattern:
    """Targets of ``symbol``'s synset pointers to nouns in :attr:`NounSynset.pointer_fields`."""
    return re.compile(rf"(?:^| ){re.escape(symbol)} (\d+) n 0000(?= |$)")


@dataclass(frozen=True)
class WordNetNouns:
    """WordNet's noun synsets in file order, and where they were read from.

    Attributes
    ----------
    folder : Path
        The WordNet folder read.
    version : str
        WordNet's version, from the license header (``3.0``).
    synsets : tuple of NounSynset
        Every noun synset, in ``data.noun`` order (NLTK's ``all_synsets("n")`` order).
    """

    folder: Path
    version: str
    synsets: tuple[NounSynset, ...]

    def by_offset(self) -> dict[int, NounSynset]:
        """Offset → synset.

        Returns
        -------
        dict
        """
        return {s.offset: s for s in self.synsets}

    def source_version(self) -> dict:
        """What identifies the data read (:func:`wordnet_source_version` of its folder).

        Returns
        -------
        dict
        """
        return wordnet_source_version(self.folder)


def wordnet_source_version(folder: str | os.PathLike | None = None) -> dict:
    """What identifies the WordNet data the noun graph is read from: its version and the
    SHA-256 of ``data.noun`` and ``index.noun``. Reads the two files' bytes only.

    Parameters
    ----------
    folder : str or os.PathLike, optional
        A WordNet database folder (default :func:`wordnet_folder`, never downloading).

    Returns
    -------
    dict
        ``{"wordnet": "3.0", "data.noun": sha256, "index.noun": sha256, "folder": path}``; the
        same files give the same dict, so a change of the installed data shows as a new
        observed version.

    Raises
    ------
    WordNetUnavailable
        No WordNet found, or ``folder`` holds none.
    """
    root = Path(folder) if folder is not None else wordnet_folder()
    version = wordnet_version(root)
    if version is None:
        raise WordNetUnavailable(f"{root}: no WordNet data.noun with a version in its license header")
    return {"wordnet": version, **{f: file_sha256(root / f) for f in ("data.noun", "index.noun")}, "folder": str(root)}


def nltk_data_path(environ=os.environ) -> list[Path]:
    """NLTK's data path as ``nltk.data.path`` starts on Linux and macOS, without importing
    NLTK (seconds): ``$NLTK_DATA``'s folders, ``~/nltk_data``, then ``nltk_data`` under
    ``sys.prefix``, ``sys.prefix/share``, ``sys.prefix/lib`` and ``/usr/share``,
    ``/usr/local/share``, ``/usr/lib``, ``/usr/local/lib``. (A test compares it with NLTK's.)

    Parameters
    ----------
    environ : mapping, optional
        The environment.

    Returns
    -------
    list of Path
    """
    home = environ.get("HOME") or os.path.expanduser("~")

    def expand(d: str) -> str:
        return home + d[1:] if home != "~" and (d == "~" or d.startswith("~/")) else os.path.expanduser(d)

    path = [Path(expand(d)) for d in environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if "APPENGINE_RUNTIME" not in environ and home != "~":
        path.append(Path(home, "nltk_data"))
    path += [Path(sys.prefix, "nltk_data"), Path(sys.prefix, "share", "nltk_data"), Path(sys.prefix, "lib", "nltk_data"),
             Path("/usr/share/nltk_data"), Path("/usr/local/share/nltk_data"), Path("/usr/lib/nltk_data"),
             Path("/usr/local/lib/nltk_data")]
    return path


def wordnet_version(folder: str | os.PathLike) -> str | None:
    """WordNet's version from the license header of ``folder/data.noun`` (``3.0``), as NLTK's
    ``get_version()`` reads it; None when there is none.

    Parameters
    ----------
    folder : str or os.PathLike
        A WordNet database folder.

    Returns
    -------
    str or None
    """
    folder = Path(folder)
    try:
        with (folder / "data.noun").open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.startswith("  "):
                    return None
                if m := _VERSION.search(line):
                    return m.group(1)
    except OSError:
        return None
    return None


def _holds_wordnet(folder: Path) -> bool:
    return (folder / "index.noun").is_file() and wordnet_version(folder) == WORDNET_VERSION


def wordnet_folder(*, allow_download: bool = False, system_dirs=SYSTEM_WORDNET_DIRS) -> Path:
    """The folder WordNet 3.0's database files are read from (module docstring, *Where*).

    Parameters
    ----------
    allow_download : bool, optional
        Whether NLTK may download WordNet when no copy is found.
    system_dirs : optional
        Where to look for a system WordNet.

    Returns
    -------
    Path

    Raises
    ------
    WordNetUnavailable
        With instructions, when no copy is found or set up.
    """
    for root in (*nltk_data_path(), default_nltk_data_dir()):
        if _holds_wordnet(root / "corpora" / "wordnet"):
            return root / "corpora" / "wordnet"
    for d in system_dirs:
        if _holds_wordnet(Path(d)):
            return Path(d)
    return Path(str(ensure_wordnet(allow_download=allow_download, system_dirs=system_dirs).root))


def index_offsets(folder: str | os.PathLike, pos: str = "n") -> dict[str, list[int]]:
    """``index.<pos>`` of a WordNet folder: lemma → the offsets of its synsets of that part of
    speech, in sense order (NLTK's ``_lemma_pos_offset_map``).

    Parameters
    ----------
    folder : str or os.PathLike
        A WordNet database folder.
    pos : str, optional
        ``n``, ``v``, ``a`` or ``r``.

    Returns
    -------
    dict

    Raises
    ------
    MalformedWordNet
        A line that does not follow ``wndb(5WN)``, with its file and line number.
    """
    index = Path(folder) / f"index.{POS_FILES[pos]}"
    out: dict[str, list[int]] = {}
    with index.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith(" "):
                continue
            f = line.split()
            try:
                n_synsets, n_pointers = int(f[2]), int(f[3])
                offsets = [int(x) for x in f[6 + n_pointers:6 + n_pointers + n_synsets]]
                if len(offsets) != n_synsets:
                    raise IndexError(f"{n_synsets} synsets announced, {len(offsets)} found")
            except (IndexError, ValueError) as e:
                raise MalformedWordNet(f"{index}, line {lineno}: expected 'lemma pos synset_cnt p_cnt [ptr …] "
                                       f"sense_cnt tagsense_cnt offset …' (wndb(5WN)): {e}") from None
            out[f[0]] = offsets
    return out


def _lemmas(fields: list[str]) -> tuple[str, ...]:
    """The words of a ``data.*`` line split into ``fields`` (``w_cnt`` in hexadecimal, then
    ``word lex_id`` pairs), syntactic markers removed as NLTK removes them."""
    n = int(fields[3], 16)
    lemmas = tuple(w if "(" not in w else _SYNTACTIC_MARKER.match(w).group(1) for w in fields[4:4 + 2 * n:2])
    if len(lemmas) != n:
        raise IndexError(f"{n} words announced, {len(lemmas)} found")
    return lemmas


def synset_lemma_names(folder: str | os.PathLike, pos: str) -> dict[int, tuple[str, ...]]:
    """``data.<pos>`` of a WordNet folder: offset → the synset's lemma names in file order,
    syntactic markers (``(a)``, ``(p)``, ``(ip)``) removed, as NLTK's ``lemma_names()``.

    Parameters
    ----------
    folder : str or os.PathLike
        A WordNet database folder.
    pos : str
        ``n``, ``v``, ``a`` (adjective and satellite synsets) or ``r``.

    Returns
    -------
    dict

    Raises
    ------
    MalformedWordNet
        A line that does not follow ``wndb(5WN)``, with its file and line number.
    """
    data = Path(folder) / f"data.{POS_FILES[pos]}"
    out: dict[int, tuple[str, ...]] = {}
    with data.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line or line[0].isspace():
                continue
            f = line.split(None, 4 + 2 * 255)
            try:
                out[int(f[0])] = _lemmas(f)
            except (IndexError, ValueError) as e:
                raise MalformedWordNet(f"{data}, line {lineno}: expected 'offset lex_filenum ss_type w_cnt word "
                                       f"lex_id …' (wndb(5WN)): {type(e).__name__}: {e}") from None
    return out


def exception_list(folder: str | os.PathLike, pos: str) -> dict[str, list[str]]:
    """``<pos>.exc`` of a WordNet folder: an inflected form → its base forms (morphy's
    exception list, NLTK's ``_exception_map``).

    Parameters
    ----------
    folder : str or os.PathLike
        A WordNet database folder.
    pos : str
        ``n``, ``v``, ``a`` or ``r``.

    Returns
    -------
    dict
    """
    out: dict[str, list[str]] = {}
    with (Path(folder) / f"{POS_FILES[pos]}.exc").open(encoding="utf-8") as fh:
        for line in fh:
            terms = line.split()
            if terms:
                out[terms[0]] = terms[1:]
    return out


def _read_synsets(data: Path, senses: dict[str, list[int]]) -> tuple[NounSynset, ...]:
    """Every synset line of ``data.noun`` (module docstring, *Format*)."""
    out = []
    with data.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line or line[0].isspace():
                continue
            try:
                f = line.split("|", 1)[0].split()
                offset, lemmas = int(f[0]), _lemmas(f)
                at = 4 + 2 * len(lemmas)
                n_pointers = int(f[at])
                if len(f) < at + 1 + 4 * n_pointers:
                    raise IndexError(f"{n_pointers} pointers announced, fewer found")
                first = lemmas[0].lower()
                name = f"{first}.n.{senses[first].index(offset) + 1:02d}"
            except (IndexError, ValueError, KeyError) as e:
                raise MalformedWordNet(f"{data}, line {lineno}: expected 'offset lex_filenum n w_cnt word lex_id … "
                                       f"p_cnt ptr … | gloss' with its first lemma in index.noun (wndb(5WN)): "
                                       f"{type(e).__name__}: {e}") from None
            out.append(NounSynset(offset, name, lemmas, " ".join(f[at + 1:at + 1 + 4 * n_pointers])))
    return tuple(out)


def wordnet_nouns(folder: str | os.PathLike | None = None) -> WordNetNouns:
    """WordNet's noun synsets, read from ``folder`` (default :func:`wordnet_folder`), once per
    process and folder.

    Parameters
    ----------
    folder : str or os.PathLike, optional
        A WordNet database folder (``data.noun``, ``index.noun``).

    Returns
    -------
    WordNetNouns

    Raises
    ------
    MalformedWordNet
        A line that does not follow the format, with its file and line number.
    WordNetUnavailable
        No WordNet 3.0 found (default folder only).
    """
    folder = Path(folder) if folder is not None else wordnet_folder()
    stamps = tuple((st.st_mtime_ns, st.st_size) for st in (_stat(folder / "data.noun"), _stat(folder / "index.noun")))
    return _read(folder, stamps)


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError as e:
        raise WordNetUnavailable(f"{path}: cannot be read ({e.strerror or e})") from None


@lru_cache(maxsize=2)
def _read(folder: Path, stamps: tuple) -> WordNetNouns:
    """The nouns of ``folder`` while its files keep their ``stamps`` (a changed file is read again)."""
    version = wordnet_version(folder)
    if version is None:
        raise WordNetUnavailable(f"{folder}: no WordNet data.noun with a version in its license header")
    synsets = _read_synsets(folder / "data.noun", index_offsets(folder, "n"))
    return WordNetNouns(folder, version, synsets)
