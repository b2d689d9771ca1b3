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
wikidata              a variable of its rebuilds is set (:mod:`assets.wikidata.rebuilds`:
                      ``$TAXOFORGE_WIKIDATA_SEEDS``, ``$TAXOFORGE_WIKIDATA_DUMP``, or a
                      ``$TAXOFORGE_RUN_CONFIG_WIKIDATA_SPARQL``/``_DUMP`` file)
coldp                 a variable of its rebuild is set (:mod:`assets.biology.rebuilds`:
                      ``$TAXOFORGE_COLDP_SOURCE``, ``$TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE``)
any of them           named in ``$TAXOFORGE_TAXONOMIES`` (comma-separated: e.g.
                      ``inat21,inaturalist_named``)
===================== =============================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from assets.biology.rebuilds import BIOLOGY_REBUILDS
from assets.snapshots.assets import EMBEDDED_SNAPSHOTS, SNAPSHOTS
from assets.wikidata.rebuilds import WIKIDATA_REBUILDS

__all__ = ["configured_taxonomies"]

_REBUILDS = (*WIKIDATA_REBUILDS, *BIOLOGY_REBUILDS)


def configured_taxonomies(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The taxonomies with snapshot and scoring assets, in :data:`~assets.snapshots.assets.SNAPSHOTS` order.

    Parameters
    ----------
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    tuple of str
        Taxonomy names. Raises ``ValueError`` naming ``$TAXOFORGE_TAXONOMIES`` when it names
        an unknown taxonomy.
    """
    env = os.environ if environ is None else environ
    named = {n.strip() for n in env.get("TAXOFORGE_TAXONOMIES", "").split(",") if n.strip()}
    unknown = sorted(named - set(SNAPSHOTS))
    if unknown:
        raise ValueError(f"$TAXOFORGE_TAXONOMIES names {', '.join(unknown)}: choose from {', '.join(SNAPSHOTS)}")
    on = set(EMBEDDED_SNAPSHOTS) | named
    on |= {r.publishes for r in _REBUILDS if any(env.get(v, "").strip() for v in r.variables)}
    return tuple(n for n in SNAPSHOTS if n in on)

