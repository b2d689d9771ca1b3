"""METEOR (Banerjee and Lavie 2005 [14]; Lavie and Agarwal 2007 [15]) as NLTK computes it, over a stored
WordNet synonym table.

NLTK's ``meteor_score`` aligns a hypothesis with a reference in three passes — exact words,
Porter stems, WordNet synonyms — and scores the alignment by a recall-weighted harmonic mean
with a fragmentation penalty. Its synonym pass asks WordNet, for every unmatched hypothesis
word, for the lemma names of all its synsets, which makes NLTK read the whole of WordNet
(seconds) in every process that scores. :class:`SynonymTable` holds exactly what that pass
needs, derived once from WordNet's database files (:meth:`SynonymTable.from_wordnet_files`,
read without NLTK in seconds; equal to what NLTK's own reader gives, tested):

* for each part of speech (noun, verb, adjective, adverb) and each lemma of WordNet's index,
  the lemma names (those without ``_``) of the lemma's synsets of that part of speech;
* WordNet's exception lists (``geese`` → ``goose``) and NLTK's suffix rules of *morphy*,

so that :meth:`SynonymTable.synonyms` gives the same set as NLTK's
``{l.name() for s in wordnet.synsets(word) for l in s.lemmas() if "_" not in l.name()}``
(morphy run per part of speech, exceptions first, then the suffix rules once).
:func:`synonym_table` stores it in the cache folder (``$TAXOFORGE_CACHE_DIR/meteor/``,
:func:`taxoforge.files.default_cache_dir`) as one SQLite file, written the first time
(temporary file, then a rename) and opened in place by every later call: a word costs two
indexed look-ups, and WordNet is never read again.

**Built at install** (reading WordNet's files takes seconds): ``python -m taxoforge.scores.measures.meteor``
(:func:`install_synonym_table`; ``make demo``/``make test`` run it beside the kernels' compilation)
writes it into :func:`install_dir`, named as the cache's, its SHA-256 beside it; :func:`synonym_table`
opens that first (a fresh cache folder still finds it), trusted when this user's digests recorded it,
or when it, its digest file and folder are this user's or root's, written by no one else (the installed
code's own protection), and its SHA-256 is the installed one; else the cache's, else built (a progress line).

The cache's file is used only when it is the one this user's runs wrote: its SHA-256, recorded when
it was written among the user's trusted digests (:mod:`taxoforge.files.trusted`, a private
folder — never beside the file, where whoever could poison the table could also poison its
checksum), is checked whenever the file's stamps changed. A table that is not (a valid
SQLite file someone edited: *cat* and *dog* made synonyms) is rebuilt from WordNet; when
WordNet is not there to rebuild it, that is an error (:class:`SynonymTableError`), never a
METEOR computed on it. A cache folder that cannot be written (or read) costs only the speed:
the table is built from WordNet in memory for the run, and a warning says so.

:func:`meteor` is NLTK's ``single_meteor_score`` over such a table, step for step (the same
alignment order, ties and floating-point operations), so its scores are equal to NLTK's —
a test compares them over many pairs.

References
----------
Numbers of docs/references.md: [14] Banerjee and Lavie 2005 (METEOR); [15] Lavie and
Agarwal 2007 (METEOR's parameters as NLTK uses them).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from taxoforge.files import default_cache_dir, write_text_atomic
from taxoforge.files.checksums import file_sha256
from taxoforge.files.locks import held_lock
from taxoforge.files.trusted import TrustedDigests, file_stamps
from taxoforge.sources.wordnet_data import WordNetUnavailable
from taxoforge.sources.wordnet_files import (exception_list, index_offsets, synset_lemma_names, wordnet_folder,
                                             wordnet_version)

__all__ = ["SynonymTable", "synonym_table", "install_synonym_table", "install_dir", "installed_table_path", "meteor",
           "TABLE_FORMAT", "POS_ORDER", "SynonymTableError", "BUILDING", "MORPHOLOGICAL_SUBSTITUTIONS"]

#: bump when the stored table's layout or the rules deriving it change
TABLE_FORMAT = 1
#: the parts of speech NLTK's ``synsets(word)`` runs through, in its order
POS_ORDER = ("n", "v", "a", "r")
#: morphy's suffix rules per part of speech, in NLTK's order (``WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS``,
#: the detachment rules of WordNet's ``morphy(7WN)``; a test checks they are NLTK's)
MORPHOLOGICAL_SUBSTITUTIONS = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
#: the most seconds to wait for another process building the table
LOCK_TIMEOUT_S = 600.0
#: the progress line of a call that builds the table (it was not built at install)
BUILDING = "building METEOR's WordNet synonym table (once) …"


class SynonymTableError(RuntimeError):
    """METEOR's stored synonym table cannot be verified and cannot be rebuilt (no WordNet)."""


class SynonymTable:
    """WordNet's synonyms as METEOR's synonym pass sees them (module docstring).

    Made from WordNet's files by :meth:`from_wordnet_files` (in memory), written by
    :meth:`write` and opened by :meth:`open` (an SQLite file read in place: opening costs
    nothing, and each word asked for is two indexed look-ups, remembered).

    Parameters
    ----------
    lemmas : dict
        ``pos`` → ``lemma`` → the lemma names (space-separated, no ``_`` in them) of the
        lemma's synsets of that part of speech; a lemma is listed for every part of speech
        WordNet's index has it under (possibly with no names).
    exceptions : dict
        ``pos`` → inflected form → base forms (WordNet's exception lists).
    substitutions : dict
        ``pos`` → ``[(suffix, replacement), …]``: morphy's suffix rules, in order.
    version : str
        WordNet's version, for the record.
    db : optional
        An open SQLite table to read lemmas from lazily (instead of ``lemmas`` in
        memory).
    """

    def __init__(self, lemmas: dict | None, exceptions: dict | None, substitutions: dict, version: str = "",
                 *, db=None) -> None:
        self.lemmas = lemmas
        self.exceptions = exceptions
        self.substitutions = {p: [tuple(r) for r in rules] for p, rules in substitutions.items()}
        self.version = version
        self._db = db
        self._cache: dict[str, frozenset[str]] = {}

    # ------------------------------------------------------------------ lookups
    def _exceptions_of(self, form: str) -> dict[str, list[str]]:
        """``pos`` → base forms, for the parts of speech whose exception list has ``form``."""
        if self._db is None:
            return {p: exc[form] for p, exc in self.exceptions.items() if form in exc}
        rows = self._db.execute("SELECT pos, bases FROM exception WHERE form = ?", (form,)).fetchall()
        return {p: b.split(" ") if b else [] for p, b in rows}

    def _lemmas_of(self, forms: set[str]) -> dict[tuple[str, str], str]:
        """``(pos, form)`` → names, for the forms WordNet's index has under ``pos``."""
        if self._db is None:
            return {(p, f): idx[f] for p, idx in self.lemmas.items() for f in forms if f in idx}
        q = ",".join("?" * len(forms))
        return {(p, f): n for p, f, n in self._db.execute(
            f"SELECT pos, lemma, names FROM lemma WHERE lemma IN ({q})", sorted(forms))}

    def synonyms(self, word: str) -> frozenset[str]:
        """The lemma names (without ``_``) of every synset of ``word`` (lower-cased) — NLTK's
        ``wordnet.synsets(word)`` as METEOR reads it: per part of speech, *morphy*'s base forms
        (exceptions, else each suffix rule once; the word first) that WordNet's index has.

        Parameters
        ----------
        word : str
            The word.

        Returns
        -------
        frozenset[str]
            The lemma names (without ``_``) of every synset of ``word``, as above.
        """
        got = self._cache.get(word)
        if got is None:
            w = word.lower()
            exc = self._exceptions_of(w)
            forms = {p: exc[p] if p in exc else [w[: -len(old)] + new for old, new in self.substitutions.get(p, ())
                                                 if w.endswith(old)] for p in POS_ORDER}
            found = self._lemmas_of({w, *(f for fs in forms.values() for f in fs)})
            names: set[str] = set()
            for p in POS_ORDER:
                for f in dict.fromkeys([w, *forms[p]]):
                    s = found.get((p, f))
                    if s:
                        names.update(s.split(" "))
            got = self._cache[word] = frozenset(names)
        return got

    # ------------------------------------------------------------------ build, store, open
    @classmethod
    def from_wordnet_files(cls, folder: str | os.PathLike) -> "SynonymTable":
        """The table of a WordNet database folder, read without NLTK
        (:mod:`taxoforge.sources.wordnet_files`: ``index.*``, ``data.*``, ``*.exc``); equal to
        the table NLTK's own reader of the same files gives (tested), in a fraction of its time.

        Parameters
        ----------
        folder : str or os.PathLike
            A WordNet 3.0 database folder.
        """
        lemmas: dict[str, dict[str, str]] = {}
        for pos in POS_ORDER:
            names_of = {off: {n for n in names if "_" not in n} for off, names in synset_lemma_names(folder, pos).items()}
            by_lemma = {}
            for lemma, offsets in index_offsets(folder, pos).items():
                by_lemma[lemma] = " ".join(sorted(set().union(*(names_of[off] for off in offsets))))
            lemmas[pos] = by_lemma
        exceptions = {p: exception_list(folder, p) for p in POS_ORDER}
        subs = {p: [list(r) for r in MORPHOLOGICAL_SUBSTITUTIONS[p]] for p in POS_ORDER}
        return cls(lemmas, exceptions, subs, version=wordnet_version(folder) or "")

    def write(self, path: str | os.PathLike) -> Path:
        """Store the table as an SQLite file at ``path`` (written beside it, then renamed).

        Parameters
        ----------
        path : str or os.PathLike
            The SQLite file to write.

        Returns
        -------
        Path
            ``path``.
        """
        import sqlite3
        import tempfile

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        try:
            con = sqlite3.connect(tmp)
            with con:
                con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                con.execute("CREATE TABLE lemma (lemma TEXT NOT NULL, pos TEXT NOT NULL, names TEXT NOT NULL, "
                            "PRIMARY KEY (lemma, pos)) WITHOUT ROWID")
                con.execute("CREATE TABLE exception (form TEXT NOT NULL, pos TEXT NOT NULL, bases TEXT NOT NULL, "
                            "PRIMARY KEY (form, pos)) WITHOUT ROWID")
                con.executemany("INSERT INTO meta VALUES (?, ?)", [
                    ("format", str(TABLE_FORMAT)), ("wordnet", self.version),
                    ("substitutions", json.dumps(self.substitutions, sort_keys=True))])
                con.executemany("INSERT INTO lemma VALUES (?, ?, ?)",
                                sorted((lm, p, n) for p, idx in self.lemmas.items() for lm, n in idx.items()))
                con.executemany("INSERT INTO exception VALUES (?, ?, ?)",
                                sorted((f, p, " ".join(b)) for p, exc in self.exceptions.items() for f, b in exc.items()))
            con.close()
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def open(cls, path: str | os.PathLike) -> "SynonymTable | None":
        """The table stored at ``path`` (read-only), or None when it is missing, unreadable
        or of another format (then it is built again).

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        """
        import sqlite3

        path = Path(path)
        if not path.is_file():
            return None
        try:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != str(TABLE_FORMAT):
                db.close()
                return None
            db.execute("SELECT 1 FROM lemma LIMIT 1").fetchall()
            db.execute("SELECT 1 FROM exception LIMIT 1").fetchall()
            return cls(None, None, json.loads(meta["substitutions"]), meta.get("wordnet", ""), db=db)
        except (sqlite3.Error, KeyError, ValueError):
            return None


def _nltk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nltk")
    except PackageNotFoundError:  # pragma: no cover - nltk is a dependency
        return "unknown"


def table_path(cache_dir: str | os.PathLike | None = None) -> Path:
    """Where :func:`synonym_table` keeps the table: ``<cache>/meteor/wordnet-synonyms-<format>-nltk<version>.sqlite``
    (NLTK's version is part of the name: its reader derives the table).

    Parameters
    ----------
    cache_dir : str or os.PathLike, optional
        The cache folder (default: a temporary one).

    Returns
    -------
    Path
        The table's file in the cache folder.
    """
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / "meteor" / f"wordnet-synonyms-{TABLE_FORMAT}-nltk{_nltk_version()}.sqlite"


def install_dir() -> Path:
    """What the installation built at install: ``$TAXOFORGE_SHARE_DIR``, else ``<sys.prefix>/share/taxoforge``.

    Returns
    -------
    Path
    """
    env = os.environ.get("TAXOFORGE_SHARE_DIR")
    return Path(env) if env else Path(sys.prefix) / "share" / "taxoforge"


def installed_table_path(share_dir: str | os.PathLike | None = None) -> Path:
    """Where :func:`install_synonym_table` writes the table (its SHA-256 in ``<file>.sha256``).

    Parameters
    ----------
    share_dir : str or os.PathLike, optional
        The installation's folder (default :func:`install_dir`).

    Returns
    -------
    Path
    """
    return table_path(share_dir if share_dir is not None else install_dir())


def _protected(path: Path) -> bool:
    """Whether ``path`` is a file or folder (not a link) of this user or root, written by no one else."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    mine = st.st_uid in (os.geteuid() if hasattr(os, "geteuid") else st.st_uid, 0)
    return (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)) and mine and not st.st_mode & 0o022


def _installed_key(path: Path) -> str:
    return f"installed\0{os.path.realpath(path)}\0{TABLE_FORMAT}\0{_nltk_version()}"


def _installed_table(path: Path, trust) -> "SynonymTable | None":
    """The table installed at ``path`` when it can be trusted (module docstring), else None."""
    key = _installed_key(path)
    if os.path.islink(path) or not path.is_file():
        return None
    if trust.lookup(key, [path]) is None:
        digest_file = Path(str(path) + ".sha256")
        if not (_protected(path) and _protected(digest_file) and _protected(path.parent)):
            return None
        stamps = file_stamps([path])
        try:
            want = digest_file.read_text(encoding="ascii").split()[0]
        except (OSError, ValueError, IndexError):
            return None
        if _file_sha256(path) != want:  # damaged, or not the table installed
            return None
        trust.remember(key, [path], want, stamps)
    return SynonymTable.open(path)


def install_synonym_table(share_dir: str | os.PathLike | None = None, echo=print) -> Path | None:
    """Build METEOR's synonym table into the installation, once (module docstring): from
    WordNet, to :func:`installed_table_path` with its SHA-256 beside it, recorded among the
    installing user's trusted digests. A table already installed and intact is kept.

    Parameters
    ----------
    share_dir : str or os.PathLike, optional
        The installation's folder (default :func:`install_dir`).
    echo : callable, optional
        Where the one progress line goes.

    Returns
    -------
    Path or None
        The installed table; None when WordNet is not available (said in a line).
    """
    path = installed_table_path(share_dir)
    trust = TrustedDigests("meteor-synonyms")
    if _installed_table(path, trust) is not None:
        echo(f"taxoforge: METEOR's WordNet synonym table already installed ({path})")
        return path
    t0 = time.perf_counter()
    try:
        folder = wordnet_folder(allow_download=False)
    except WordNetUnavailable as e:
        echo(f"taxoforge: METEOR's synonym table not built: {str(e).splitlines()[0] if str(e) else 'no WordNet'}")
        return None
    built = SynonymTable.from_wordnet_files(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    with held_lock(str(path) + ".lock", "METEOR's synonym table", LOCK_TIMEOUT_S):
        built.write(path)
        digest = _file_sha256(path)
        write_text_atomic(Path(str(path) + ".sha256"), f"{digest}  {path.name}\n")
    trust.remember(_installed_key(path), [path], digest)
    echo(f"taxoforge: METEOR's WordNet synonym table built into the installation once ({path}, "
         f"{time.perf_counter() - t0:.1f} s; no scoring call builds it)")
    return path


def _file_sha256(path: Path) -> str | None:
    try:
        return file_sha256(path)
    except OSError:
        return None


def _trusted_table(path: Path, trust, key: str) -> "SynonymTable | None":
    """The table at ``path`` when it is the one this user's runs wrote (module docstring)."""
    if not path.is_file():
        return None
    if trust.lookup(key, [path]) is None:
        rec = trust.record(key)
        stamps = file_stamps([path])
        if rec is None or _file_sha256(path) != rec["digest"]:
            return None
        trust.remember(key, [path], rec["digest"], stamps)
    return SynonymTable.open(path)


def synonym_table(cache_dir: str | os.PathLike | None = None, *, allow_download: bool = False,
                  share_dir: str | os.PathLike | None = None, progress=None) -> SynonymTable:
    """METEOR's synonym table: the one built at install when it can be trusted, else opened
    from the cache folder when it is the one this user's runs wrote, else built from WordNet's
    files (:func:`taxoforge.sources.wordnet_files.wordnet_folder`) under a file lock and stored
    there, with a progress line saying so (module docstring); in memory when the cache folder
    cannot be written.

    Parameters
    ----------
    cache_dir : str or os.PathLike, optional
        The cache folder (default :func:`taxoforge.files.default_cache_dir`).
    allow_download : bool, optional
        Whether WordNet may be downloaded when it is not installed.
    share_dir : str or os.PathLike, optional
        The installation's folder (default :func:`install_dir`).
    progress : callable, optional
        Called with :data:`BUILDING` before the table is built (default: a line on stderr).

    Returns
    -------
    SynonymTable

    Raises
    ------
    SynonymTableError
        A stored table that cannot be verified, and no WordNet to rebuild it.
    taxoforge.sources.wordnet_data.WordNetUnavailable
        No table stored, and no WordNet.
    """
    import logging

    path = table_path(cache_dir)
    trust = TrustedDigests("meteor-synonyms")
    key = f"{os.path.realpath(path)}\0{TABLE_FORMAT}\0{_nltk_version()}"
    try:
        table = _installed_table(installed_table_path(share_dir), trust)
        if table is None:
            table = _trusted_table(path, trust, key)
    except OSError:
        table = None
    if table is not None:
        return table
    try:
        folder = wordnet_folder(allow_download=allow_download)
    except WordNetUnavailable as e:
        if os.path.lexists(path):
            raise SynonymTableError(f"{path}: METEOR's synonym table there was not written by this user's runs (or "
                                    "changed since), and WordNet is not available to rebuild it "
                                    f"({str(e).splitlines()[0] if str(e) else 'WordNet missing'}); remove the file, "
                                    "install WordNet, or score with --no-meteor") from None
        raise
    say = progress if progress is not None else (lambda m: print(m, file=sys.stderr, flush=True))
    say(BUILDING)
    built = SynonymTable.from_wordnet_files(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with held_lock(str(path) + ".lock", "METEOR's synonym table", LOCK_TIMEOUT_S):
            table = _trusted_table(path, trust, key)  # another process may have built it meanwhile
            if table is None:
                built.write(path)
                trust.remember(key, [path], _file_sha256(path))
                table = SynonymTable.open(path)
    except OSError as e:
        logging.getLogger("taxoforge.scores").warning(
            "METEOR's synonym table cannot be stored in %s (%s): it is built in memory for this run", path.parent,
            getattr(e, "strerror", None) or e)
        return built
    return table if table is not None else built


# ---------------------------------------------------------------------------- the score
def _match_exact(hyp: list[tuple[int, str]], ref: list[tuple[int, str]]):
    """Pairs of equal words, the hypothesis read from its end and each word taking the
    reference's last free occurrence; returns (pairs, unmatched hypothesis, unmatched reference)."""
    at: dict[str, list[int]] = defaultdict(list)
    for j, (_, w) in enumerate(ref):
        at[w].append(j)
    pairs, used_h, used_r = [], set(), set()
    for i in range(len(hyp) - 1, -1, -1):
        js = at.get(hyp[i][1])
        if js:
            j = js.pop()
            used_h.add(i)
            used_r.add(j)
            pairs.append((hyp[i][0], ref[j][0]))
    return pairs, [p for i, p in enumerate(hyp) if i not in used_h], [p for j, p in enumerate(ref) if j not in used_r]


def _match_synonyms(hyp: list[tuple[int, str]], ref: list[tuple[int, str]], synonyms: Callable[[str], frozenset]):
    """Each hypothesis word (from the end) with the reference word, among its synonyms and
    itself, whose last free occurrence lies furthest right."""
    at: dict[str, list[int]] = defaultdict(list)
    for j, (_, w) in enumerate(ref):
        at[w].append(j)
    pairs, used_h, used_r = [], set(), set()
    for i in range(len(hyp) - 1, -1, -1):
        word = hyp[i][1]
        best_j, best = -1, None
        for syn in synonyms(word) | {word}:
            js = at.get(syn)
            if js and js[-1] > best_j:
                best_j, best = js[-1], syn
        if best is not None:
            at[best].pop()
            used_h.add(i)
            used_r.add(best_j)
            pairs.append((hyp[i][0], ref[best_j][0]))
    return pairs, [p for i, p in enumerate(hyp) if i not in used_h], [p for j, p in enumerate(ref) if j not in used_r]


def _chunks(pairs: list[tuple[int, int]]) -> int:
    """The fewest runs of pairs adjacent in both the hypothesis and the reference."""
    runs = 1
    for (h0, r0), (h1, r1) in zip(pairs, pairs[1:]):
        if not (h1 == h0 + 1 and r1 == r0 + 1):
            runs += 1
    return runs


def meteor(reference: Sequence[str], hypothesis: Sequence[str], synonyms: Callable[[str], frozenset],
           stem: Callable[[str], str], alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5) -> float:
    """METEOR of one tokenised hypothesis against one tokenised reference, as NLTK's
    ``single_meteor_score`` computes it: words lower-cased; aligned by exact words, then by
    ``stem`` (NLTK's Porter stemmer), then by ``synonyms`` (:meth:`SynonymTable.synonyms`) of
    the stems left over; ``Fmean = P·R / (α·P + (1 − α)·R)`` times ``1 − γ·(chunks /
    matches)^β``; 0 when nothing aligns.

    >>> meteor(["a", "cat"], ["a", "cat"], lambda w: frozenset(), str)
    0.9375

    Parameters
    ----------
    reference : Sequence[str]
        The reference's words.
    hypothesis : Sequence[str]
        The hypothesis's words.
    synonyms : Callable[[str], frozenset]
        ``synonyms(word)``: the word's WordNet synonyms.
    stem : Callable[[str], str]
        ``stem(word)``: the word's stem.
    alpha : float, optional
        METEOR's precision–recall weight.
    beta : float, optional
        The fragmentation penalty's exponent.
    gamma : float, optional
        The fragmentation penalty's weight.

    Returns
    -------
    float
        The score, in [0, 1].
    """
    hyp = [(i, w.lower()) for i, w in enumerate(hypothesis)]
    ref = [(j, w.lower()) for j, w in enumerate(reference)]
    n_hyp, n_ref = len(hyp), len(ref)
    exact, hyp, ref = _match_exact(hyp, ref)
    stemmed, hyp, ref = _match_exact([(i, stem(w)) for i, w in hyp], [(j, stem(w)) for j, w in ref])
    syn, _, _ = _match_synonyms(hyp, ref, synonyms)
    pairs = sorted(exact + stemmed + syn, key=lambda p: p[0])
    m = len(pairs)
    try:
        precision = float(m) / n_hyp
        recall = float(m) / n_ref
        fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
        frag = float(_chunks(pairs)) / m
    except ZeroDivisionError:
        return 0.0
    return (1 - gamma * frag**beta) * fmean


if __name__ == "__main__":  # pragma: no cover - the command line, run at install (module docstring)
    install_synonym_table()
