"""One snapshot asset per taxonomy the deployment configures (:mod:`assets.snapshots.taxonomies`)."""

import dagster as dg

from assets.common.deployment import deployment_environ
from assets.snapshots.assets import snapshot_assets
from assets.snapshots.taxonomies import configured_taxonomies


@dg.definitions
def configured_snapshots() -> dg.Definitions:
    """``<name>_snapshot`` for every configured taxonomy."""
    return dg.Definitions(assets=snapshot_assets(configured_taxonomies(deployment_environ())))
