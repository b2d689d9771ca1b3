"""The Catalogue of Life rebuild's job and weekly schedule (:mod:`assets.biology.rebuilds`), for
the deployment the code location is built for."""

import dagster as dg

from assets.biology.rebuilds import BIOLOGY_REBUILDS
from assets.common.deployment import deployment_environ
from assets.common.schedules import rebuild_definitions
from assets.snapshots.taxonomies import configured_taxonomies


@dg.definitions
def biology_rebuilds() -> dg.Definitions:
    """Job ``catalogue_of_life_rebuild`` and its schedule."""
    environ = deployment_environ()
    return rebuild_definitions(BIOLOGY_REBUILDS, configured_taxonomies(environ), environ)
