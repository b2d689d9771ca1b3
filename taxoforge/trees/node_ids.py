"""The lookups between node ids and node indexes of a :class:`~taxoforge.trees.taxonomy.Taxonomy`.

A part of :class:`~taxoforge.trees.taxonomy.Taxonomy` (a mixin, not a type of its own). A
node's index is its position in the sorted ``ids``. A tree made from a nodes table holds
``ids`` as an object array and looks an id up by binary search (a dict of every id once many
single lookups were made); a tree made from stored arrays
(:meth:`~taxoforge.trees.taxonomy.Taxonomy.from_arrays`) holds the ids as a polars Series
and searches it, making the object array only when something asks for :attr:`NodeIds.ids`.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

import numpy as np
import polars as pl

__all__ = ["NodeIds"]


class NodeIds:
    """The id ↔ index lookups of a tree (module docstring). They read ``ids`` or
    ``_id_series`` and ``parent_idx``."""

    @cached_property
    def ids(self) -> np.ndarray:
        """Node ids in sorted order (an object array; made on first use for a tree made
        from arrays)."""
        return self._id_series.to_numpy().astype(object)

    @cached_property
    def id_series(self) -> pl.Series:
        """Node ids in sorted order as a polars String Series: the stored Series of a tree made
        from arrays, else made from :attr:`ids` once (the tables built from a tree join on it)."""
        if self._id_series is not None:
            return self._id_series
        return pl.Series(self.ids.tolist(), dtype=pl.String)

    def ids_at(self, indexes) -> list[str]:
        """The ids of the nodes at ``indexes``, without making :attr:`ids` for a tree made
        from stored arrays (an object array of every id: a tenth of a second on a
        million-node tree, for a few ids).

        Parameters
        ----------
        indexes : array_like of int
            Node indexes.

        Returns
        -------
        list of str

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b"], "parent_id": [None, "r", "r"]}))
        >>> t.ids_at([2, 0])
        ['r', 'a']
        """
        idx = np.asarray(indexes, dtype=np.int64)
        series = self._series_ids()
        if series is not None:
            return series.gather(idx).to_list()
        return self.ids[idx].tolist()

    def _series_ids(self) -> pl.Series | None:
        """The ids as a Series while :attr:`ids` is not made yet, else None."""
        return self._id_series if "ids" not in self.__dict__ else None

    def __len__(self) -> int:
        """Number of nodes."""
        return len(self.parent_idx)

    def __contains__(self, node_id: object) -> bool:
        """Whether ``node_id`` is a node of the tree."""
        return self._index(node_id, missing_ok=True) is not None

    @cached_property
    def _pos(self) -> dict:
        """id → index (built once many single-node lookups have been made)."""
        return dict(zip(self.ids.tolist(), range(len(self.ids))))

    def _index(self, node_id, missing_ok: bool = False):
        self._lookups += 1
        series = self._series_ids()
        if series is not None and self._lookups <= 10_000:  # a binary search in the Series: no object array
            i = int(series.search_sorted(node_id)) if isinstance(node_id, str) else len(series)
            i = i if i < len(series) and series[i] == node_id else None
        elif self._lookups > 10_000 or "_pos" in self.__dict__:
            i = self._pos.get(node_id)
        else:  # a binary search: no dict of every id for a few lookups
            i = int(np.searchsorted(self.ids, node_id)) if isinstance(node_id, str) else len(self.ids)
            i = i if i < len(self.ids) and self.ids[i] == node_id else None
        if i is None and not missing_ok:
            raise KeyError(f"unknown node id {node_id!r}")
        return i

    def has(self, node_ids) -> np.ndarray:
        """Per id: is it a node of the tree (vectorised ``in``)?

        Parameters
        ----------
        node_ids : iterable of str
            The ids (anything that is not a string is no node).

        Returns
        -------
        numpy.ndarray
            One boolean per id.

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"]}))
        >>> t.has(["a", "zz", None]).tolist()
        [True, False, False]
        """
        if self._id_series is None:
            return np.fromiter((isinstance(x, str) and x in self for x in node_ids), bool)
        return _search(self._id_series, _as_ids(node_ids))[1]

    def index_of(self, node_ids: Iterable[str] | str) -> np.ndarray:
        """Integer indexes of node ids, the input of the vectorised queries.

        Parameters
        ----------
        node_ids : str or iterable of str
            One id or many.

        Returns
        -------
        numpy.ndarray
            ``int64`` indexes into :attr:`ids`, one per id, in the order given.

        Raises
        ------
        KeyError
            Naming the first unknown id and how many are unknown.

        Examples
        --------
        >>> from taxoforge.trees.taxonomy import Taxonomy
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.index_of(["b", "a1"]).tolist(), t.ids[t.index_of("r")].tolist()
        ([3, 1], ['r'])
        >>> t.index_of(["a", "zz"])
        Traceback (most recent call last):
        ...
        KeyError: "unknown node id 'zz' (1 unknown)"
        """
        if self._id_series is not None:  # a binary search in the Series of ids, whether or not :attr:`ids` is made
            return _index_in(self._id_series, node_ids)
        if isinstance(node_ids, str):
            node_ids = [node_ids]
        arr = np.asarray(list(node_ids) if not isinstance(node_ids, np.ndarray) else node_ids, dtype=object)
        idx = np.searchsorted(self.ids, arr)
        idx = np.minimum(idx, len(self.ids) - 1)
        bad = self.ids[idx] != arr
        if bad.any():
            raise KeyError(f"unknown node id {arr[np.flatnonzero(bad)[0]]!r} ({int(bad.sum())} unknown)")
        return idx.astype(np.int64)


def _as_ids(node_ids) -> pl.Series:
    """The ids as a String Series, anything that is not a string as null (no node)."""
    return pl.Series([x if isinstance(x, str) else None for x in node_ids], dtype=pl.String)


#: from how many ids on a search looks up each distinct id once (a scoring run's ground truths
#: name the same few thousand nodes in every model's rows)
_DISTINCT_FIRST = 4096


def _search(ids: pl.Series, want: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Binary search of ``want`` in the sorted ``ids``: each one's position (meaningful
    where found) and whether it is there (nulls never are). Many ids that repeat are
    searched once each, and the answers joined back in order."""
    if not len(want) or not len(ids):
        return np.zeros(len(want), np.int64), np.zeros(len(want), bool)
    if len(want) >= _DISTINCT_FIRST:
        distinct = want.unique()
        if 2 * len(distinct) <= len(want):
            pos, found = _binary_search(ids, distinct)
            back = pl.DataFrame({"id": want}).join(pl.DataFrame({"id": distinct, "pos": pos, "found": found}),
                                                   on="id", how="left", maintain_order="left", nulls_equal=True)
            return back["pos"].to_numpy().astype(np.int64), back["found"].to_numpy().astype(bool)
    return _binary_search(ids, want)


def _binary_search(ids: pl.Series, want: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_search` of every id of ``want`` (not empty) in the sorted, not empty ``ids``."""
    pos = np.minimum(ids.search_sorted(want.fill_null("")).to_numpy().astype(np.int64), len(ids) - 1)
    return pos, (ids.gather(pos) == want).fill_null(False).to_numpy()


def _index_in(ids: pl.Series, node_ids) -> np.ndarray:
    """:meth:`Taxonomy.index_of` by a binary search in the sorted Series of ids."""
    if isinstance(node_ids, pl.Series):
        given, want = None, node_ids.cast(pl.String)
    else:
        given = [node_ids] if isinstance(node_ids, str) else list(node_ids)
        want = _as_ids(given)
    pos, found = _search(ids, want)
    if not found.all():
        bad = np.flatnonzero(~found)
        first = given[bad[0]] if given is not None else want[int(bad[0])]
        raise KeyError(f"unknown node id {first!r} ({len(bad)} unknown)")
    return pos
