"""Which taxonomies this code location publishes and scores: the embedded three always, the
others once the deployment says where their source is.

A taxonomy that is not configured has no snapshot asset, no scoring asset and no scoring
job, so the UI lists only what can be built (files in a folder named after it are scored by
``model_output_scores`` against whatever the snapshot store holds). Its source and tree
assets stay: they are where a run from the launchpad, with its config, starts.

===================== =============================================================
taxonomy              configured when
===================== =============================================================
wordnet, imagenet1k,  always (built offline from installed packages)
inaturalist
wikidata              ``$TAXOFORGE_WIKIDATA_SEEDS`` or ``$TAXOFORGE_WIKIDATA_DUMP`` (or a
                      ``$TAXOFORGE_RUN_CONFIG_WIKIDATA_SPARQL``/``_DUMP`` file) is set
coldp                 ``$TAXOFORGE_COLDP_SOURCE`` (or ``$TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE``)
any of them           named in ``$TAXOFORGE_TAXONOMIES`` (comma-separated: e.g.
                      ``inat21,inaturalist_named``)
===================== =============================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from assets.scoring import SCORED_TAXONOMIES
from assets.snapshots import EMBEDDED_SNAPSHOTS

__all__ = ["configured_taxonomies", "unconfigured_asset_names"]

_BY_ENVIRONMENT = {
    "wikidata": ("TAXOFORGE_WIKIDATA_SEEDS", "TAXOFORGE_WIKIDATA_DUMP", "TAXOFORGE_RUN_CONFIG_WIKIDATA_SPARQL",
                 "TAXOFORGE_RUN_CONFIG_WIKIDATA_DUMP"),
    "coldp": ("TAXOFORGE_COLDP_SOURCE", "TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE"),
}


def configured_taxonomies(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The taxonomies with snapshot and scoring assets, in :data:`~assets.scoring.SCORED_TAXONOMIES` order.

    Raises ``ValueError`` naming ``$TAXOFORGE_TAXONOMIES`` when it names an unknown taxonomy."""
    env = os.environ if environ is None else environ
    named = {n.strip() for n in env.get("TAXOFORGE_TAXONOMIES", "").split(",") if n.strip()}
    unknown = sorted(named - set(SCORED_TAXONOMIES))
    if unknown:
        raise ValueError(f"$TAXOFORGE_TAXONOMIES names {', '.join(unknown)}: choose from {', '.join(SCORED_TAXONOMIES)}")
    on = set(EMBEDDED_SNAPSHOTS) | named
    on |= {name for name, variables in _BY_ENVIRONMENT.items() if any(env.get(v, "").strip() for v in variables)}
    return tuple(n for n in SCORED_TAXONOMIES if n in on)


def unconfigured_asset_names(environ: Mapping[str, str] | None = None) -> set[str]:
    """Snapshot and scoring assets of the taxonomies that are not configured."""
    on = set(configured_taxonomies(environ))
    return {f"{n}_{kind}" for n in SCORED_TAXONOMIES if n not in on for kind in ("snapshot", "scores")}
