"""The two rebuilds of the Wikidata taxonomy and what each needs from the deployment.

==================  ===================  ==============================================
rebuild             default cron (UTC)   needs
==================  ===================  ==============================================
wikidata_sparql     ``0 3 * * 1``        seeds (``$TAXOFORGE_WIKIDATA_SEEDS``) and, for
                                         the public endpoint, a contact address
                                         (``$TAXOFORGE_WIKIDATA_CONTACT``)
wikidata_dump       ``0 5 * * 3``        the dump file (``$TAXOFORGE_WIKIDATA_DUMP``),
                                         read by the one-pass local reader; Wikidata
                                         writes a new truthy dump every week
==================  ===================  ==============================================

Both build the same assets from two kinds of source and share one concurrency key
(``taxoforge/rebuild: wikidata``), so they never run at once. The Spark reading of the whole
dump (``wikidata_dump_graph``, :mod:`assets.wikidata.dump_spark`) is in neither: it needs a
cluster's configuration and is materialised by hand. Either variable configures the
``wikidata`` taxonomy (its snapshot and scoring assets, :mod:`assets.snapshots.taxonomies`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assets.common.schedules import Rebuild, missing_file, op_config

__all__ = ["WIKIDATA_SPARQL", "WIKIDATA_DUMP", "WIKIDATA_REBUILDS"]

_WIKIDATA_ASSETS = ("wikidata_graph", "wikidata_labels", "wikidata_tree", "wikidata_links")


def _wikidata_sparql_needs(run_config: Mapping[str, Any], resources) -> str | None:
    cfg = op_config(run_config, "wikidata_graph")
    if cfg.get("input_file"):
        return "wikidata_graph has an input_file: that is the wikidata_dump rebuild's configuration"
    if not cfg.get("seed_qids") and not cfg.get("seed_qids_file"):
        return ("no seed entities: set $TAXOFORGE_WIKIDATA_SEEDS to a file of QIDs (a `qid` column, or one "
                "QID a line; e.g. OVEN's entity list)")
    if cfg.get("seed_qids_file") and (why := missing_file(cfg["seed_qids_file"], "seed file")):
        return why
    try:  # the client refuses the public endpoint without a contact address; say so instead of failing a run
        resources.wikidata_sparql.client(endpoint=cfg.get("endpoint"), contact=cfg.get("contact"))
    except ValueError as exc:
        return f"no contact address: {exc}"
    return None


def _wikidata_dump_needs(run_config: Mapping[str, Any], resources) -> str | None:
    cfg = op_config(run_config, "wikidata_graph")
    if not cfg.get("input_file"):
        return ("no dump: set $TAXOFORGE_WIKIDATA_DUMP to the path of a Wikidata truthy dump "
                "(latest-truthy.nt.gz, N-Triples or Turtle, plain, .gz or .bz2)")
    if why := missing_file(cfg["input_file"], "dump file"):
        return why
    if cfg.get("seed_qids_file") and (why := missing_file(cfg["seed_qids_file"], "seed file")):
        return why
    return None


WIKIDATA_SPARQL = Rebuild(
    "wikidata_sparql", "wikidata", _WIKIDATA_ASSETS, "0 3 * * 1",
    "Wikidata is edited continuously: the seeds' classes are queried again weekly (Mondays 03:00 UTC) "
    "over SPARQL, politely, one request at a time.",
    publishes="wikidata", op="wikidata_graph", settings={"seed_qids_file": "TAXOFORGE_WIKIDATA_SEEDS"},
    needs=_wikidata_sparql_needs, required_resources=frozenset({"wikidata_sparql"}))
WIKIDATA_DUMP = Rebuild(
    "wikidata_dump", "wikidata", _WIKIDATA_ASSETS, "0 5 * * 3",
    "Wikidata writes a new truthy dump every week: the file at $TAXOFORGE_WIKIDATA_DUMP is read again "
    "weekly (Wednesdays 05:00 UTC) by the one-pass local reader.",
    publishes="wikidata", network=False, op="wikidata_graph",
    settings={"input_file": "TAXOFORGE_WIKIDATA_DUMP", "seed_qids_file": "TAXOFORGE_WIKIDATA_SEEDS"},
    needs=_wikidata_dump_needs)
WIKIDATA_REBUILDS = (WIKIDATA_SPARQL, WIKIDATA_DUMP)
