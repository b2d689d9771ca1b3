"""The crosswalk asset over the taxonomies the deployment configures
(:mod:`assets.snapshots.taxonomies`): their trees join it by name, the WordNet bridge when WordNet
or ImageNet-1k is one of them, the Wikidata graph's identifier claims when Wikidata is."""

import dagster as dg

from assets.common.deployment import deployment_environ
from assets.crosswalk.assets import crosswalk_asset
from assets.snapshots.taxonomies import configured_taxonomies


@dg.definitions
def configured_crosswalk() -> dg.Definitions:
    """``taxonomy_crosswalk`` linking the configured taxonomies."""
    return dg.Definitions(assets=[crosswalk_asset(configured_taxonomies(deployment_environ()))])
