"""The rebuild of the Catalogue of Life tree and what it needs from the deployment.

===================  ===================  ==============================================
rebuild              default cron (UTC)   needs
===================  ===================  ==============================================
catalogue_of_life    ``0 4 * * 1``        the release (``$TAXOFORGE_COLDP_SOURCE``: URL,
                                          zip or folder); releases come every few weeks
===================  ===================  ==============================================

The variable configures the ``coldp`` taxonomy too (its snapshot and scoring assets,
:mod:`assets.snapshots.taxonomies`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assets.common.schedules import Rebuild, missing_file, op_config

__all__ = ["CATALOGUE_OF_LIFE", "BIOLOGY_REBUILDS"]


def _coldp_needs(run_config: Mapping[str, Any], resources) -> str | None:
    source = op_config(run_config, "coldp_tree").get("source")
    if not source:
        return ("no release: set $TAXOFORGE_COLDP_SOURCE to a ColDP release (URL, zip or folder; e.g. a Catalogue "
                "of Life release from ChecklistBank); taxoforge ships none")
    if not str(source).startswith(("http://", "https://")):
        return missing_file(source, "ColDP release")
    return None


CATALOGUE_OF_LIFE = Rebuild(
    "catalogue_of_life", "catalogue_of_life", ("coldp_tree",), "0 4 * * 1",
    "Catalogue of Life releases come out every few weeks; checked weekly (Mondays 04:00 UTC).",
    publishes="coldp", op="coldp_tree", settings={"source": "TAXOFORGE_COLDP_SOURCE"}, needs=_coldp_needs)
BIOLOGY_REBUILDS = (CATALOGUE_OF_LIFE,)
