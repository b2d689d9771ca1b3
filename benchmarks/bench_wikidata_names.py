"""Benchmark: query shapes for the Wikidata names of iNaturalist taxa, on the loopback engine.

``run(size)`` generates a Wikidata-shaped store (seeded): ``taxa`` items, each with a
non-deprecated P3151 statement (2 % deprecated), a P225, 0–3 English and 0–3 other-language
P1843 statements (one in ten preferred, 3 % deprecated) and 0–2 P1420 synonym items with their
own P225, plus the truthy ``wdt:`` triples of the best-rank values, as the Wikidata RDF dump
has them. It serves the store with Oxigraph over HTTP on 127.0.0.1
(``tests/taxoforge/sources/wikidata/loopback_sparql.py``) and asks for the names of every
taxon id (plus 10 % ids no item carries), one shape after the other, through the same polite
:class:`~taxoforge.sources.wikidata.sparql.SparqlClient`:

``values_union`` (the shape used, ``sql/wikidata/inat_taxon_names.rq``)
    a ``UNION`` of three branches, one per name property, each repeating the ``VALUES`` list of
    ids and the join to the P3151 statements, at several batch sizes; also end to end through
    :func:`~taxoforge.sources.wikidata.taxon_names.fetch_inat_taxon_names` (validation included).
``values_union_outer``
    one ``VALUES`` list and P3151 join outside the ``UNION`` of the three properties (the
    obvious way to write it; Oxigraph then evaluates the branches over every statement).
``values_split`` — baseline
    the same ``VALUES`` batches, one query per property (three requests per batch).
``id_range``
    no ``VALUES``: every P3151 statement, filtered to an integer id range per batch
    (``FILTER(xsd:integer(?inat) >= lo && < hi)``); each batch scans all P3151 statements.
``values_truthy``
    ``VALUES`` + ``UNION`` over truthy ``wdt:`` triples only (no statement nodes): cheaper, but
    a preferred common name hides the normal-rank ones and deprecated ids are not seen as such.

Each measurement is the fastest of ``repeat`` runs, after one untimed warm-up query. Every
shape must return the same (id, property, name) rows as ``values_union`` (the truthy
shape is reported with its difference instead). Throughput is ids per second of wall time,
client and server in one process (Oxigraph answers on another thread); the speed-up of each
shape is its throughput over the baseline's, measured in the same run.

    python -m benchmarks.bench_wikidata_names --size small
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

SIZES = {"tiny": {"taxa": 500, "batch_sizes": [100, 500], "repeat": 1},
         "small": {"taxa": 5_000, "batch_sizes": [100, 500, 2_000], "repeat": 3},
         "full": {"taxa": 50_000, "batch_sizes": [500, 2_000], "repeat": 1}}
BASELINE = "values_split"

_PREFIXES = """PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""
_ID_STATEMENT = """  ?item p:P3151 ?idStatement .
  ?idStatement ps:P3151 ?inat ; wikibase:rank ?idRank .
  FILTER(?idRank != wikibase:DeprecatedRank)
"""
_BRANCH = {
    "P225": """?item p:P225 ?statement . ?statement ps:P225 ?name ; wikibase:rank ?rank .
    BIND("P225" AS ?property)""",
    "P1843": """VALUES ?lang { "en" }
    ?item p:P1843 ?statement . ?statement ps:P1843 ?name ; wikibase:rank ?rank .
    FILTER(LANGMATCHES(LANG(?name), ?lang)) BIND("P1843" AS ?property)""",
    "P1420": """?item p:P1420 ?statement . ?statement ps:P1420 ?synonym ; wikibase:rank ?rank .
    ?synonym wdt:P225 ?name . BIND("P1420" AS ?property)""",
}


def _values(ids: list[str]) -> str:
    return "  VALUES ?inat { " + " ".join(f'"{i}"' for i in ids) + " }\n"


def split_query(ids: list[str], prop: str) -> str:
    return (_PREFIXES + "SELECT ?inat ?item ?property ?name WHERE {\n" + _values(ids) + _ID_STATEMENT
            + "  " + _BRANCH[prop] + "\n  FILTER(?rank != wikibase:DeprecatedRank)\n}")


def outer_union_query(ids: list[str]) -> str:
    union = "\n  UNION\n".join("  { " + b + " }" for b in _BRANCH.values())
    return (_PREFIXES + "SELECT ?inat ?item ?property ?name WHERE {\n" + _values(ids) + _ID_STATEMENT + union
            + "\n  FILTER(?rank != wikibase:DeprecatedRank)\n}")


def range_query(lo: int, hi: int) -> str:
    union = "\n  UNION\n".join("  { " + b + " }" for b in _BRANCH.values())
    return (_PREFIXES + "SELECT ?inat ?item ?property ?name WHERE {\n" + _ID_STATEMENT
            + f"  FILTER(xsd:integer(?inat) >= {lo} && xsd:integer(?inat) < {hi})\n" + union
            + "\n  FILTER(?rank != wikibase:DeprecatedRank)\n}")


def truthy_query(ids: list[str]) -> str:
    return (_PREFIXES + "SELECT ?inat ?item ?property ?name WHERE {\n" + _values(ids)
            + "  ?item wdt:P3151 ?inat .\n"
            + '  { ?item wdt:P225 ?name . BIND("P225" AS ?property) }\n  UNION\n'
            + '  { ?item wdt:P1843 ?name . FILTER(LANGMATCHES(LANG(?name), "en")) BIND("P1843" AS ?property) }\n'
            + '  UNION\n  { ?item wdt:P1420 ?synonym . ?synonym wdt:P225 ?name . BIND("P1420" AS ?property) }\n}')


def wikidata_like_store(n_taxa: int, seed: int = 0):
    """An Oxigraph store of ``n_taxa`` Wikidata-shaped taxon items (module docstring) and the
    iNaturalist ids they carry."""
    import pyoxigraph as ox

    rng = random.Random(seed)
    wd, wds = "http://www.wikidata.org/entity/", "http://www.wikidata.org/entity/statement/"
    p, ps, wdt = "http://www.wikidata.org/prop/", "http://www.wikidata.org/prop/statement/", \
        "http://www.wikidata.org/prop/direct/"
    wb = "http://wikiba.se/ontology#"
    lines: list[str] = []
    ids = rng.sample(range(1, 20 * n_taxa), n_taxa)
    syn_q = 500_000_000

    def statement(item: str, prop: str, sid: str, value: str, rank: str, best: bool) -> None:
        s = f"<{wds}{sid}>"
        lines.append(f"<{wd}{item}> <{p}{prop}> {s} .")
        lines.append(f"{s} <{ps}{prop}> {value} .")
        lines.append(f"{s} <{wb}rank> <{wb}{rank}> .")
        if best:
            lines.append(f"<{wd}{item}> <{wdt}{prop}> {value} .")

    for n, inat in enumerate(ids):
        q = f"Q{400_000_000 + n}"
        deprecated_id = rng.random() < 0.02
        statement(q, "P3151", f"{q}-id", f'"{inat}"', "DeprecatedRank" if deprecated_id else "NormalRank",
                  not deprecated_id)
        statement(q, "P225", f"{q}-name", f'"Genus{n % 997} species{n}"', "NormalRank", True)
        for lang, k in (("en", rng.randint(0, 3)), ("de", rng.randint(0, 1)), ("fr", rng.randint(0, 1)),
                        ("es", rng.randint(0, 1))):
            preferred = k > 1 and rng.random() < 0.1
            for j in range(k):
                dep = rng.random() < 0.03
                rank = "DeprecatedRank" if dep else ("PreferredRank" if preferred and j == 0 else "NormalRank")
                best = not dep and (not preferred or j == 0)
                statement(q, "P1843", f"{q}-{lang}{j}", f'"common name {j} of {n}"@{lang}', rank, best)
        for j in range(rng.choice((0, 0, 1, 2))):
            syn_q += 1
            statement(q, "P1420", f"{q}-syn{j}", f"<{wd}Q{syn_q}>", "NormalRank", True)
            lines.append(f'<{wd}Q{syn_q}> <{wdt}P225> "Oldgenus{n % 101} species{n}x{j}" .')
    store = ox.Store()
    store.load(("\n".join(lines) + "\n").encode(), format=ox.RdfFormat.N_TRIPLES)
    return store, sorted(ids), len(lines)


def _rows(bindings: list[dict]) -> set[tuple]:
    return {(b["inat"]["value"], b["property"]["value"], b["name"]["value"]) for b in bindings}


def _chunks(seq: list, n: int):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


def _timed(fn, repeat: int = 1) -> tuple[float, set, int]:
    """Fastest of ``repeat`` runs: (wall seconds, rows, requests)."""
    best = None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        rows, requests = fn()
        wall = time.perf_counter() - t0
        best = wall if best is None else min(best, wall)
    return best, rows, requests


def run(size: str = "small") -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from taxoforge.sources.wikidata.queries import render
    from taxoforge.sources.wikidata.sparql import SparqlClient
    from taxoforge.sources.wikidata.taxon_names import fetch_inat_taxon_names
    from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

    cfg = SIZES[size]
    t0 = time.perf_counter()
    store, item_ids, n_triples = wikidata_like_store(cfg["taxa"])
    load_s = time.perf_counter() - t0
    rng = random.Random(1)
    absent = rng.sample(sorted(set(range(1, 20 * cfg["taxa"])) - set(item_ids)), cfg["taxa"] // 10)
    asked = [str(i) for i in sorted(item_ids + absent)]  # numeric order: batches are id ranges too
    asked_set = set(asked)
    n = len(asked)
    out: dict = {"size": size, "taxa": cfg["taxa"], "ids_asked": n, "triples": n_triples,
                 "store_load_s": round(load_s, 2), "shapes": [], "baseline": BASELINE}
    with LoopbackSparql(store) as srv:
        client = SparqlClient(endpoint=srv.url, contact="bench@taxoforge.invalid", timeout=120)

        def select(q: str, name: str) -> list[dict]:
            return client.select(q, name=name)

        def values_union(bs):
            rows, req = set(), 0
            for batch in _chunks(asked, bs):
                rows |= _rows(select(render("inat_taxon_names", external_ids=batch, langs=["en"]), "values_union"))
                req += 1
            return rows, req

        def values_union_outer(bs):
            rows, req = set(), 0
            for batch in _chunks(asked, bs):
                rows |= _rows(select(outer_union_query(batch), "values_union_outer"))
                req += 1
            return rows, req

        def values_split(bs):
            rows, req = set(), 0
            for batch in _chunks(asked, bs):
                for prop in _BRANCH:
                    rows |= _rows(select(split_query(batch, prop), "values_split"))
                    req += 1
            return rows, req

        def id_range(bs):
            rows, req = set(), 0
            for batch in _chunks(asked, bs):
                lo, hi = int(batch[0]), int(batch[-1]) + 1
                rows |= {r for r in _rows(select(range_query(lo, hi), "id_range")) if r[0] in asked_set}
                req += 1
            return rows, req

        def values_truthy(bs):
            rows, req = set(), 0
            for batch in _chunks(asked, bs):
                rows |= _rows(select(truthy_query(batch), "values_truthy"))
                req += 1
            return rows, req

        values_union(cfg["batch_sizes"][0])  # warm-up: connection, query parser, store caches
        reference = None
        for bs in cfg["batch_sizes"]:
            for shape, fn in (("values_union", values_union), ("values_union_outer", values_union_outer),
                              ("values_split", values_split),
                              ("id_range", id_range), ("values_truthy", values_truthy)):
                wall, rows, req = _timed(lambda: fn(bs), cfg["repeat"])
                if reference is None:
                    reference = rows
                rec = {"shape": shape, "batch_size": bs, "requests": req, "rows": len(rows), "wall_s": round(wall, 3),
                       "ids_per_s": round(n / wall, 1) if wall else None,
                       "agree": rows == reference}
                if shape == "values_truthy":
                    rec["missing_vs_statements"] = len(reference - rows)
                    rec["extra_vs_statements"] = len(rows - reference)
                out["shapes"].append(rec)
        # end to end, production function (validation, dedup, polars frame)
        e2e = []
        for bs in cfg["batch_sizes"]:
            holder = {}

            def production(bs=bs):
                holder["res"] = fetch_inat_taxon_names(client, asked, langs=["en"], batch_size=bs)
                return set(), 0

            wall, _, _ = _timed(production, cfg["repeat"])
            res = holder["res"]
            got = {(r[0].split(":", 1)[1], r[5], r[1]) for r in res.names.iter_rows()}
            e2e.append({"batch_size": bs, "wall_s": round(wall, 3), "ids_per_s": round(n / wall, 1),
                        "rows": res.names.height, "agree": got == reference})
        out["end_to_end"] = e2e
    base = {s["batch_size"]: s for s in out["shapes"] if s["shape"] == BASELINE}
    for s in out["shapes"]:
        b = base.get(s["batch_size"])
        s["speedup_vs_baseline"] = round(b["wall_s"] / s["wall_s"], 2) if b and s["wall_s"] else None
    out["all_statement_shapes_agree"] = all(s["agree"] for s in out["shapes"] if s["shape"] != "values_truthy") \
        and all(e["agree"] for e in out["end_to_end"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=list(SIZES), default="small")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.size), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
