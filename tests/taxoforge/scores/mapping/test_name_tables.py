"""Name tables: keys in base form, the forms each shared key came from, non-naming names."""

from __future__ import annotations

from taxoforge.scores.mapping import MappingConfig
from taxoforge.scores.mapping.name_tables import NameTables
from taxoforge.trees.taxonomy import Taxonomy

from ..conftest import tree_tables


def _tables(base_forms: bool = True) -> tuple:
    rows = [("r", None, "entity"), ("brake", "r", "brake"), ("system", "r", "brake system"),
            ("two", "r", "two"), ("pig", "r", "Guinea-Pig")]
    names = [("system", "brakes"), ("pig", "guinea pigs")]
    tax = Taxonomy.of(tree_tables(rows, names))
    return tax, NameTables(tax, MappingConfig(base_forms=base_forms))


def test_keys_are_normal_forms_in_base_form_and_shared_keys_remember_their_forms():
    tax, t = _tables()
    assert "guinea pig" in t.names and "guinea pigs" not in t.names
    j = t.lookup("brake")
    ids = lambda nodes: sorted(str(tax.ids[v]) for v in nodes)  # noqa: E731
    assert ids(t.nodes_of_name(j)) == ["brake", "system"]
    assert ids(t.nodes_of_name(j, "brakes")) == ["system"] and ids(t.nodes_of_name(j, "brake")) == ["brake"]
    assert ids(t.nodes_of_name(t.lookup("guinea pig"), "guinea pigs")) == ["pig"]  # one node: no split
    assert t.name_non_naming[t.lookup("two")] and not t.name_non_naming[j]
    assert {"brake", "guinea", "two", "entity"} <= t.first_words
    _, plain = _tables(base_forms=False)
    assert "brakes" in plain.names and "guinea pigs" in plain.names


def test_tables_built_a_slice_of_names_per_core_are_the_ones_built_in_one_piece(monkeypatch):
    """Normal and base forms are computed on one slice of the names per core at once: the
    tables are exactly those of one piece (slices of one name here, on four cores)."""
    import numpy as np

    from taxoforge.scores.mapping import name_tables

    rows = [("r", None, "entity"), *((f"n{i}", "r", label) for i, label in enumerate(
        ["Guinea-Pigs", "brakes", "Mice", "Ærø", "St. John's-wort", "two tenches", "dogs", "Pied-billed Grebe"]))]
    tax = Taxonomy.of(tree_tables(rows, [("n1", "brake system"), ("n2", "house mice")]))
    whole, meta = NameTables.build(tax, MappingConfig())
    monkeypatch.setattr(name_tables, "_MIN_PART", 1)
    monkeypatch.setattr(name_tables, "cpus", lambda: 4)
    parts, meta_parts = NameTables.build(tax, MappingConfig())
    assert meta_parts == meta and sorted(parts) == sorted(whole)
    for k in whole:
        np.testing.assert_array_equal(parts[k], whole[k], err_msg=k)
