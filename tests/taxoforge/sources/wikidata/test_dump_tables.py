"""The dump route's tables: the same at every thread count."""

from __future__ import annotations

import pytest

from taxoforge.sources.wikidata import dump_blocks
from taxoforge.sources.wikidata.dump import read_dump
from taxoforge.trees.threads import every_step_split

WD = "http://www.wikidata.org/entity/Q"
P279 = "<http://www.wikidata.org/prop/direct/P279>"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A Wikidata-shaped dump (aliases, other languages, escapes, non-items) with repeated
    statements, and its seeds."""
    from benchmarks.generate import wikidata_like_ntriples

    p = tmp_path_factory.mktemp("dump") / "gen.nt"
    info = wikidata_like_ntriples(p, 0.002, seed=7, alias_share=0.4, other_lang_share=0.3)
    with p.open("ab") as f:
        f.write(b"".join(p.read_bytes().splitlines(keepends=True)[:200]))  # statements repeated
        f.write(f"<{WD}2> {P279} <{WD}10> .\n<{WD}2> {P279} <{WD}10> .\n<{WD}2> {P279} <{WD}10> .\n".encode())
    return p, info["seeds"][:30]


@pytest.mark.parametrize("kw", [{}, {"seeds": True}, {"lang": "de,en-gb,en"}])
def test_the_same_tables_at_every_thread_count(generated, monkeypatch, kw):
    path, seeds = generated
    monkeypatch.setattr(dump_blocks, "CHUNK", 1 << 16)  # many blocks
    args = {"lang": kw.get("lang", "en"), "seed_qids": seeds if kw.get("seeds") else None}
    with every_step_split(cores=4, grain=64):  # as on four cores, a thread for every 64 rows
        graphs = [read_dump(path, workers=t, **args) for t in (1, 2, 4)]
    one = graphs[0]
    assert one.dropped.filter(one.dropped["kind"] == "repeated_statement").height > 0
    for g in graphs[1:]:
        assert g.edges.equals(one.edges) and g.names.equals(one.names) and g.dropped.equals(one.dropped)
        assert g.info["dropped_edges"] == one.info["dropped_edges"]
