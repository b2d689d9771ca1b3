"""One retry policy for everything fetched from a server: a file download
(:func:`taxoforge.files.download`) and a small document read into memory
(:func:`taxoforge.files.fetch_bytes`: a store's ``index.json``, a manifest) wait and give up
the same way.

* Dropped connections, transfers cut at their deadline, 429 and 5xx answers are retried
  ``retries`` times.
* The wait is what ``Retry-After`` asks (seconds or an HTTP date) when the answer has one,
  else an exponential back-off, ``backoff * 2 ** (attempt - 1)``.
* A ``Retry-After`` longer than ``max_retry_after`` is not slept through: the fetch fails
  at once, saying what the server asked for.
* Every wait of a second or more is said before it is taken (a warning on the
  ``taxoforge.files`` logger, which reaches stderr without any logging set up): what
  failed, how long, why, and which attempt comes next — never a silent sleep.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from taxoforge.files.errors import DownloadError, LocalFileError
from taxoforge.files.transport import MAX_RETRY_AFTER, TransientError

__all__ = ["RetryPolicy", "retrying", "transient_errors"]

log = logging.getLogger("taxoforge.files")
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait for a server (see the module doc).

    Parameters
    ----------
    retries : int
        Attempts after the first.
    backoff : float
        First back-off wait in seconds (doubled at every attempt) when the server names none.
    max_retry_after : float
        Longest ``Retry-After`` honoured, in seconds.
    """

    retries: int = 5
    backoff: float = 0.5
    max_retry_after: float = MAX_RETRY_AFTER

    def __post_init__(self) -> None:
        if self.retries < 0 or not self.backoff >= 0 or not self.max_retry_after >= 0:
            raise ValueError(f"a retry policy needs retries >= 0 and waits >= 0, got {self}")


def transient_errors() -> tuple[type[BaseException], ...]:
    """What a dropped or refused connection raises.

    Returns
    -------
    tuple of exception classes
    """
    import requests
    import urllib3

    return (ConnectionError, TimeoutError, OSError, requests.RequestException, urllib3.exceptions.HTTPError)


def retrying(url: str, policy: RetryPolicy, attempt: Callable[[int], T],
             give_up: Callable[[BaseException, int], DownloadError]) -> T:
    """Call ``attempt`` until it returns, retrying transient failures as ``policy`` says.
    :class:`DownloadError`, :class:`LocalFileError` (a full disk is no server's fault), a
    refused permission and a missing file are never retried.

    Parameters
    ----------
    url : str
        What is fetched (for the messages).
    policy : RetryPolicy
        How often and how long to wait.
    attempt : callable
        ``attempt(n)`` for ``n`` = 0, 1, …: one try.
    give_up : callable
        ``give_up(error, attempts)``: the :class:`DownloadError` raised when the retries run
        out or the server asks for too long a wait.

    Returns
    -------
    object
        What ``attempt`` returned.
    """
    transient = transient_errors()
    n = 0
    while True:
        try:
            return attempt(n)
        except (DownloadError, LocalFileError, PermissionError, FileNotFoundError, IsADirectoryError,
                NotADirectoryError):
            raise  # answers, not passing trouble
        except (TransientError, *transient) as e:
            n += 1
            asked = getattr(e, "wait", None)
            if asked is not None and asked > policy.max_retry_after:
                raise give_up(RuntimeError(f"{e}; the server asks to wait {asked:.0f} s (Retry-After), longer "
                                           f"than the {policy.max_retry_after:.0f} s this client waits"), n) from e
            if n > policy.retries:
                raise give_up(e, n) from e
            wait = asked if asked is not None else policy.backoff * 2 ** (n - 1)
            why = "as the server asks (Retry-After)" if asked is not None else "before retrying"
            (log.warning if wait >= 1 else log.info)(
                "%s: %s; waiting %.1f s %s, then attempt %d of %d", url, e, wait, why, n + 1, policy.retries + 1)
            time.sleep(wait)
