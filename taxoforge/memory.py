"""Memory management around work that allocates many short-lived containers.

A scoring run turns every answer into a few dictionaries, tuples and lists; CPython's cyclic
garbage collector runs every few hundred such allocations, and each of its older-generation
passes walks every container alive — the taxonomy's and the index's included. Those objects
hold no reference cycles that matter to the run, so the collector's passes are pure overhead
there (see the ``gc`` module's documentation, *Garbage collector interface*; the same trade is
made by ``gc.freeze`` for long-lived servers). Reference counting still frees everything that
is not part of a cycle as soon as it is dropped.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

__all__ = ["cycle_collection_paused"]


@contextmanager
def cycle_collection_paused():
    """Pause CPython's cyclic garbage collector for the block, and restore its state after.

    Nested uses are safe: the collector is enabled again only by the outermost block that
    found it enabled. Reference counting is untouched, so memory that is not held in a
    reference cycle is freed as usual; cycles made inside the block are collected by the
    collector's next pass after it.

    Yields
    ------
    None
        Nothing: the block runs with the collector paused.

    Examples
    --------
    >>> import gc
    >>> with cycle_collection_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
