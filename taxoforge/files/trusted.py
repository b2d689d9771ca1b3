"""Digests of caches, kept where the caches' writers cannot forge them.

A cache folder may be shared (``--index-dir`` on a group volume, a snapshot store's
``.taxoforge-index``, a ``$TAXOFORGE_CACHE_DIR`` others write): whoever can write it can
change a file **and** the checksum stored beside it, and a reader that trusts that checksum
uses the forgery (an edited ``name_node.npy`` with its new checksum in ``header.json``
changed predictions, and ``run.json`` still cited the verified tree). So a cache is verified
against a digest this user's own runs computed — from the data the cache was derived from,
or by recomputing it — and recorded in a **private** folder (:func:`trusted_dir`:
``$TAXOFORGE_TRUST_DIR``, else ``$XDG_STATE_HOME/taxoforge/trusted``, else
``~/.local/state/taxoforge/trusted``; owned by the user, written by no one else, in a parent
no one else may rename it out of), never beside the data.

A record (:class:`TrustedDigests`) names a cache by its kind and key (its real path and
what it was derived from) and holds its digest and the **stamps** of its files when that
digest was computed — size, inode, device, modification and change times. While the stamps
are unchanged the digest still holds (a write changes the change time, which no user can set
back), so an unchanged cache is not read through on every call; when they changed, the
caller digests the files again and uses them only if the digest is the recorded one.

A private folder that is not private after all (someone else's, or writable by others) is
not trusted: nothing is read from it or written to it, and every cache is verified the
long way.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path

__all__ = ["trusted_dir", "TrustedDigests", "file_stamps", "RACY_S"]

#: files modified this close to when their stamps were taken are not recorded (a write in the
#: same clock tick could keep the same times), as git does
RACY_S = 2.0
_FORMAT = 1


def trusted_dir() -> Path:
    """The private folder of trusted digests (module docstring); not created here.

    Returns
    -------
    Path
    """
    env = os.environ.get("TAXOFORGE_TRUST_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME")
    base = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return base / "taxoforge" / "trusted"


def _private(folder: Path) -> bool:
    """Whether ``folder`` is this user's and written by no one else, in a parent no one else
    can rename it out of (a sticky parent, like ``/tmp``, protects it)."""
    try:
        st = os.lstat(folder)
        parent = os.stat(folder.parent)
    except OSError:
        return False
    uid = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022:
        return False
    if parent.st_uid not in (uid, 0):  # its parent's owner could rename it away
        return False
    return not parent.st_mode & 0o022 or bool(parent.st_mode & stat.S_ISVTX)  # others may write there: sticky only


def file_stamps(paths) -> list | None:
    """The stamps of ``paths`` (size, inode, device, modification and change times in
    nanoseconds), in order; None when one is missing or not a regular file.

    Parameters
    ----------
    paths : iterable of path-like

    Returns
    -------
    list or None
    """
    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        out.append([st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns])
    return out


class TrustedDigests:
    """The trusted digests of one kind of cache (module docstring).

    Parameters
    ----------
    kind : str
        What the caches are (``mapping-index``, ``content-hash``, ``meteor-synonyms`` …).
    root : path-like, optional
        The private folder (default :func:`trusted_dir`).
    """

    def __init__(self, kind: str, root: str | os.PathLike | None = None) -> None:
        self.kind = kind
        self.root = Path(root) if root is not None else trusted_dir()

    def usable(self, create: bool = False) -> bool:
        """Whether the folder is private (and, with ``create``, made so when missing).

        Parameters
        ----------
        create : bool
            Create it (mode 0700) when it does not exist.

        Returns
        -------
        bool
        """
        try:
            if create and not os.path.lexists(self.root):
                self.root.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                self.root.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return False
        return _private(self.root)

    def _path(self, key: str) -> Path:
        h = hashlib.sha256(f"{self.kind}\0{key}".encode()).hexdigest()[:40]
        return self.root / f"{self.kind}-{h}.json"

    def lookup(self, key: str, files) -> dict | None:
        """The record of ``key`` when the stamps of ``files`` are still those recorded with it.

        Parameters
        ----------
        key : str
            The cache's key.
        files : sequence of path-like
            Its files, in a fixed order.

        Returns
        -------
        dict or None
            The record (``digest`` and what was remembered with it), or None.
        """
        rec = self.record(key)
        if rec is None or rec.get("stamps") is None:
            return None
        now = file_stamps(files)
        return rec if now is not None and rec.get("stamps") == now else None

    def record(self, key: str) -> dict | None:
        """The record of ``key`` whatever the files' stamps (its ``digest`` to compare a
        recomputed one with), or None.

        Parameters
        ----------
        key : str

        Returns
        -------
        dict or None
        """
        if not self.usable():
            return None
        p = self._path(key)
        try:
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 or st.st_size > 1 << 20:
                return None
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(rec, dict) or rec.get("format") != _FORMAT or rec.get("kind") != self.kind \
                or rec.get("key") != key or not isinstance(rec.get("digest"), str):
            return None
        return rec

    def remember(self, key: str, files, digest: str, stamps: list | None = None, *, racy_s: float | None = None,
                 **extra) -> bool:
        """Record ``digest`` for ``key`` with the stamps of ``files`` (``stamps``: as taken
        before the files were digested; default now). The stamps are left out when a file is
        racy (modified within :data:`RACY_S`) or changed since they were taken: the digest is
        kept, and the next :meth:`lookup` misses, so the caller digests the files again and
        compares (:meth:`record`).

        Parameters
        ----------
        key : str
        files : sequence of path-like
        digest : str
        stamps : list, optional
            The stamps taken before the files were read.
        racy_s : float, optional
            Files modified this recently are racy (default :data:`RACY_S`).
        **extra
            Other values to keep in the record.

        Returns
        -------
        bool
            Whether it was recorded.
        """
        from taxoforge.files.atomic import write_text_atomic

        now = file_stamps(files)
        limit = time.time_ns() - int((RACY_S if racy_s is None else racy_s) * 1e9)
        if now is None or (stamps is not None and stamps != now) or any(max(s[3], s[4]) > limit for s in now):
            now = None
        if not self.usable(create=True):
            return False
        rec = {"format": _FORMAT, "kind": self.kind, "key": key, "digest": digest, "stamps": now, **extra}
        try:
            write_text_atomic(self._path(key), json.dumps(rec, sort_keys=True) + "\n")
        except OSError:
            return False
        return True
