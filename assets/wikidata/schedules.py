"""The Wikidata rebuilds' jobs and weekly schedules (:mod:`assets.wikidata.rebuilds`), for the
deployment the code location is built for."""

import dagster as dg

from assets.common.deployment import deployment_environ
from assets.common.schedules import rebuild_definitions
from assets.snapshots.taxonomies import configured_taxonomies
from assets.wikidata.rebuilds import WIKIDATA_REBUILDS


@dg.definitions
def wikidata_rebuilds() -> dg.Definitions:
    """Jobs ``wikidata_sparql_rebuild``, ``wikidata_dump_rebuild`` and their schedules."""
    environ = deployment_environ()
    return rebuild_definitions(WIKIDATA_REBUILDS, configured_taxonomies(environ), environ)
