"""Wikidata: the subclass-of (P279) graph behind OVEN's entities, as a taxonomy.

Data flow::

    seeds (QIDs) ──SPARQL──▶ extract.extract_from_seeds ─┐
                                                          ├─▶ WikidataGraph ─▶ tree.build_wikidata_tree ─▶ TreeTables
    dump file (.nt/.ttl[.gz|.bz2]) ──▶ dump.read_dump ────┘                                               │
                                                                  linking.link_to_wikidata (label sets) ◀─┘

Modules: :mod:`.ids` (QID validation), :mod:`.queries` (the ``sql/wikidata/*.rq`` files),
:mod:`.sparql` (the polite WDQS client), :mod:`.checkpoint` (resumable batches),
:mod:`.extract`, :mod:`.dump`, :mod:`.exclusions` (default exclusion list), :mod:`.tree`,
:mod:`.linking`; :mod:`.taxon_names` and :mod:`.taxon_names_dump` (common names and synonyms of
iNaturalist taxa, over SPARQL or from a dump file).
"""

from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.dump import read_dump
from taxoforge.sources.wikidata.exclusions import DEFAULT_EXCLUSIONS, exclusion_node_ids, load_exclusions
from taxoforge.sources.wikidata.extract import ROOT_QID, extract_from_seeds
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.ids import validate_qid, validate_qids
from taxoforge.sources.wikidata.linking import (
    link_report,
    link_to_wikidata,
    read_name_label_set,
    read_qid_label_set,
)
from taxoforge.sources.wikidata.queries import load_query, render
from taxoforge.sources.wikidata.sparql import WDQS_ENDPOINT, QueryTimeout, SparqlClient, SparqlError
from taxoforge.sources.wikidata.taxon_names import WikidataTaxonNames, fetch_inat_taxon_names, inat_ids
from taxoforge.sources.wikidata.taxon_names_dump import read_inat_taxon_names_dump
from taxoforge.sources.wikidata.tree import build_wikidata_tree

__all__ = [
    "BatchCheckpoint",
    "DEFAULT_EXCLUSIONS",
    "ROOT_QID",
    "WDQS_ENDPOINT",
    "QueryTimeout",
    "SparqlClient",
    "SparqlError",
    "WikidataGraph",
    "WikidataTaxonNames",
    "build_wikidata_tree",
    "exclusion_node_ids",
    "extract_from_seeds",
    "fetch_inat_taxon_names",
    "inat_ids",
    "link_report",
    "link_to_wikidata",
    "load_exclusions",
    "load_query",
    "read_dump",
    "read_inat_taxon_names_dump",
    "read_name_label_set",
    "read_qid_label_set",
    "render",
    "validate_qid",
    "validate_qids",
]
