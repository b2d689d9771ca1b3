"""The content hash of a tree folder, remembered while its files stay as they were.

Citing a *tree folder* (not a snapshot: no manifest vouches for it) needs the content hash
of its tables (:func:`taxoforge.snapshots.manifest.content_id`): canonical order, every row
serialised and hashed — seconds on a 1.4 M-node tree, on every ``taxoforge score`` call.
:func:`cached_content_sha256` remembers the hash among the user's **trusted digests**
(:mod:`taxoforge.files.trusted`: a private folder, never the cache folder, which others may
write — a forged record there with the files' current stamps once made ``run.json`` cite
``ffff…``) with the **stamp** of each table file taken *before* the tables were read — its
size, inode, device, modification and change times in nanoseconds — and hands it back only
while every stamp is unchanged, so:

* any write to a table (in place, or a new file renamed over it) changes its change time
  (``ctime``, which no user can set back) and its modification time; a file added or
  removed changes the stamp too: the hash is computed again, never the old one cited;
* a file changed while it was being read makes the stored stamp older than the file: the
  next call recomputes (the stamp is taken before the read, never after);
* "racy" files — modified within :data:`RACY_S` seconds of the stamp, where a later write
  in the same clock tick could keep the same times — are not remembered (as git does);
* a record that cannot be read, or names another folder, schema or set of tables, is
  ignored; one that cannot be written (no private folder) costs only the next call's hashing.

Snapshot folders are not concerned: they are verified against their manifests
(:mod:`taxoforge.snapshots.citation`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from taxoforge.trees.tables import SCHEMA_VERSION, TABLE_SCHEMAS

__all__ = ["folder_stamp", "cached_content_sha256", "remember_content_sha256", "RACY_S"]

#: files modified this close to the stamp are not remembered (a same-tick write could hide)
RACY_S = 2.0
_FORMAT = 1


def folder_stamp(folder: str | os.PathLike) -> dict:
    """The stamp of a tree folder's table files (module docstring); take it before reading them.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.

    Returns
    -------
    dict
        The stamp of a tree folder's table files (module docstring); take it before
        reading them.
    """
    folder = Path(folder).resolve()
    files = {}
    for t in TABLE_SCHEMAS:
        try:
            st = os.stat(folder / f"{t}.parquet")
        except FileNotFoundError:
            files[t] = None
            continue
        files[t] = [st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns]
    return {"folder": str(folder), "files": files, "taken_ns": time.time_ns()}


def _trust(cache_dir: Path | None):
    from taxoforge.files.trusted import TrustedDigests

    return TrustedDigests("content-hash", cache_dir)


def _key_and_files(stamp: dict) -> tuple[str, list[Path]]:
    present = sorted(t for t, f in stamp["files"].items() if f is not None)
    folder = Path(stamp["folder"])
    return (f"{_FORMAT}\0{SCHEMA_VERSION}\0{stamp['folder']}\0{','.join(present)}",
            [folder / f"{t}.parquet" for t in present])


def cached_content_sha256(stamp: dict, *, cache_dir: Path | None = None) -> str | None:
    """The content hash remembered for the folder of ``stamp``, when every file's stamp is
    the same as when it was remembered; else None.

    Parameters
    ----------
    stamp : dict
        The folder's stamp (:func:`folder_stamp`), taken before its tables are read.
    cache_dir : Path, optional
        The private folder of trusted digests (default :func:`taxoforge.files.trusted.trusted_dir`).

    Returns
    -------
    str or None
        The content hash remembered for the folder of ``stamp``, when every file's stamp
        is the same as when it was remembered; else None.
    """
    key, files = _key_and_files(stamp)
    if not files:
        return None
    rec = _trust(cache_dir).lookup(key, files)
    if rec is None or rec.get("stamps") != [stamp["files"][f.stem] for f in files]:
        return None
    sha = rec.get("digest")
    return sha if isinstance(sha, str) and len(sha) == 64 else None


def remember_content_sha256(stamp: dict, content_sha256: str, *, cache_dir: Path | None = None) -> bool:
    """Remember ``content_sha256`` for the folder of ``stamp`` (taken before the tables were
    read), unless a file is racy or no longer has that stamp. Returns whether it was stored.

    Parameters
    ----------
    stamp : dict
        The folder's stamp (:func:`folder_stamp`), taken before its tables were read.
    content_sha256 : str
        The content hash computed from the tables.
    cache_dir : Path, optional
        The private folder of trusted digests (default :func:`taxoforge.files.trusted.trusted_dir`).

    Returns
    -------
    bool
        Remember ``content_sha256`` for the folder of ``stamp`` (taken before the tables
        were read), unless a file is racy or no longer has that stamp.
    """
    limit = stamp["taken_ns"] - int(RACY_S * 1e9)
    if any(f is not None and max(f[3], f[4]) > limit for f in stamp["files"].values()):
        return False
    if folder_stamp(stamp["folder"])["files"] != stamp["files"]:
        return False
    key, files = _key_and_files(stamp)
    if not files:
        return False
    return _trust(cache_dir).remember(key, files, content_sha256, [stamp["files"][f.stem] for f in files],
                                      racy_s=RACY_S)
