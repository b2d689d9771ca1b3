"""Where a scoring run's time went: seconds per phase that add up to the wall time.

A :class:`Timings` starts a clock (by default when the process started, so the
interpreter's start and the imports are a phase too, ``startup``); each phase is timed
with :meth:`Timings.phase`; :meth:`Timings.as_dict` gives every phase, ``other`` (what no
phase covered) and ``total`` (the clock's time so far), so the phases and ``other`` sum to
``total``. ``run.json``'s ``seconds`` is this, taken just before ``run.json`` is written.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager

__all__ = ["Timings", "process_age"]


def process_age() -> float | None:
    """Seconds since this process started.

    Returns
    -------
    float or None
        Read from ``/proc/self/stat`` against the system's uptime (Linux, to the clock
        tick); None where that cannot be read.
    """
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        started = int(stat[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time in clock ticks after boot
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return max(0.0, uptime - started)


class Timings:
    """Seconds per named phase of a run.

    Parameters
    ----------
    start : float, optional
        When the clock starts (a :func:`time.perf_counter` value; default: now).
    from_process_start : bool
        Start the clock when the process started and book the time until now as the phase
        ``startup`` (the interpreter's start and the imports).

    Examples
    --------
    >>> t = Timings()
    >>> with t.phase("read"):
    ...     pass
    >>> d = t.as_dict()
    >>> round(d["read"] + d["other"], 3) == d["total"]
    True
    """

    def __init__(self, start: float | None = None, *, from_process_start: bool = False) -> None:
        now = time.perf_counter()
        self.phases: dict[str, float] = {}
        self.start = now if start is None else start
        if from_process_start:
            age = process_age()
            if age is not None:
                self.start = now - age
                self.phases["startup"] = age

    @contextmanager
    def phase(self, name: str):
        """Time the block as (part of) phase ``name``.

        Parameters
        ----------
        name : str
            The phase.

        Yields
        ------
        None
        """
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t)

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to phase ``name``.

        Parameters
        ----------
        name : str
            The phase.
        seconds : float
            The time to add.
        """
        self.phases[name] = self.phases.get(name, 0.0) + seconds

    def move(self, name: str, seconds: float, into: str) -> None:
        """Book ``seconds`` of phase ``name`` as phase ``into`` instead (a part timed inside it).

        Parameters
        ----------
        name : str
            The phase the seconds were timed in.
        seconds : float
            The part to move.
        into : str
            The phase they belong to.
        """
        self.phases[name] = self.phases.get(name, 0.0) - seconds
        self.add(into, seconds)

    def as_dict(self, digits: int = 3) -> dict[str, float]:
        """Every phase in seconds, ``other`` and ``total``.

        Parameters
        ----------
        digits : int
            Decimal places.

        Returns
        -------
        dict
            Each phase's seconds, ``other`` (the time no phase covers) and ``total`` (since
            the start); the rounded values add up to ``total`` (``other`` takes the rounding).
        """
        total = round(time.perf_counter() - self.start, digits)
        out = {k: round(v, digits) for k, v in self.phases.items()}
        out["other"] = round(total - sum(out.values()), digits)
        out["total"] = total
        return out
