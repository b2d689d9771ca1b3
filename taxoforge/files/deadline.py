"""A deadline for a whole network transfer, not for each read.

A socket timeout bounds one ``recv``: a server sending one byte every few seconds never
trips it and holds the caller for ever. :class:`Deadline` bounds the whole transfer
instead: a watchdog thread shuts down every socket it was shown (:meth:`Deadline.watch`)
when the time is up, whatever the transfer is doing — connecting, a TLS handshake, waiting
for the headers, reading a trickling body — and the blocked read returns at once.

The time allowed is ``seconds`` plus, with ``min_rate``, one second for every
``min_rate`` bytes delivered so far (:meth:`Deadline.advance`): a transfer may last as
long as it keeps an average of ``min_rate`` bytes a second after its first ``seconds``,
so a large file on a slow but honest link completes, while a trickle is cut about
``seconds`` after it began. A transfer of at most ``n`` bytes therefore never lasts more
than ``seconds + n / min_rate``.

Sockets are watched through a duplicate of their descriptor: ``shutdown`` acts on the
connection, so it also stops a socket that has since been wrapped in TLS (the wrapper
takes the original descriptor over), and the duplicate is closed when the deadline's
``with`` block ends.
"""

from __future__ import annotations

import socket
import threading
import time

__all__ = ["Deadline"]


class Deadline:
    """Shut every watched socket down when the transfer's time is up (see the module doc).

    Parameters
    ----------
    seconds : float
        Time allowed before the first byte counts, and the whole time when ``min_rate`` is None.
    min_rate : float, optional
        Bytes a second the transfer must average after its first ``seconds``.

    Examples
    --------
    >>> with Deadline(5.0, min_rate=16384) as d:
    ...     d.advance(16384)
    ...     round(d.allowed(), 1)
    6.0
    """

    def __init__(self, seconds: float, *, min_rate: float | None = None) -> None:
        if not seconds > 0:
            raise ValueError(f"a deadline needs a positive number of seconds, got {seconds!r}")
        if min_rate is not None and not min_rate > 0:
            raise ValueError(f"min_rate must be a positive number of bytes a second, got {min_rate!r}")
        self.seconds, self.min_rate = float(seconds), min_rate
        self.received = 0
        self.expired = False
        self._start = time.monotonic()
        self._socks: list[socket.socket] = []
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watchdog, name="taxoforge-deadline", daemon=True)

    def __enter__(self) -> "Deadline":
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        with self._guard:
            socks, self._socks = self._socks, []
        for s in socks:
            s.close()

    # ---- the time allowed ---------------------------------------------------------------------
    def allowed(self) -> float:
        """Seconds the transfer may last, given the bytes delivered so far.

        Returns
        -------
        float
            ``seconds + received / min_rate``.
        """
        return self.seconds + (self.received / self.min_rate if self.min_rate else 0.0)

    def elapsed(self) -> float:
        """Seconds since the transfer began.

        Returns
        -------
        float
        """
        return time.monotonic() - self._start

    def remaining(self) -> float:
        """Seconds left.

        Returns
        -------
        float
            At least a millisecond (a socket timeout must be positive).
        """
        return max(0.001, self.allowed() - self.elapsed())

    def overdue(self) -> bool:
        """Whether the time is up.

        Returns
        -------
        bool
            Also true once the watchdog has fired.
        """
        return self.expired or self.elapsed() > self.allowed()

    def advance(self, n: int) -> None:
        """Count delivered bytes (each one buys ``1 / min_rate`` seconds).

        Parameters
        ----------
        n : int
            Bytes just delivered.
        """
        self.received += n

    # ---- the watchdog ---------------------------------------------------------------------------
    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the time is up (at once, if it already is).

        Parameters
        ----------
        sock : socket.socket
            A socket of the transfer (a duplicate of its descriptor is kept until the end).
        """
        try:
            dup = sock.dup()
        except OSError:  # already closed: nothing to stop
            return
        with self._guard:
            self._socks.append(dup)
            expired = self.expired
        if expired:
            _shutdown(dup)

    def _watchdog(self) -> None:
        while True:
            left = self.allowed() - self.elapsed()
            if left <= 0:
                break
            if self._stop.wait(left):
                return
        with self._guard:
            self.expired = True
            socks = list(self._socks)
        for s in socks:
            _shutdown(s)

    def describe(self) -> str:
        """What was exceeded, for an error message.

        Returns
        -------
        str
        """
        rate = f" and {self.min_rate / 1024:.0f} KiB/s on average after that" if self.min_rate else ""
        return (f"the transfer ran past its deadline ({self.seconds:g} s{rate}; {self.received} bytes "
                f"in {self.elapsed():.1f} s)")


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
