"""Tags and owners the asset domains share, defined once.

``EMBEDDED_DEFAULT``: the tag of every asset ``make demo`` builds offline (WordNet,
ImageNet-1k, iNaturalist and their snapshots); the ``embedded_default`` job selects it.
"""

__all__ = ["EMBEDDED_DEFAULT_TAG", "EMBEDDED_DEFAULT", "TAXOFORGE_TEAM"]

#: ``(key, value)`` of the embedded-default tag, for ``dg.AssetSelection.tag(*EMBEDDED_DEFAULT_TAG)``.
EMBEDDED_DEFAULT_TAG = ("taxoforge/embedded_default", "true")
#: The same tag as an asset's ``tags=`` mapping.
EMBEDDED_DEFAULT = dict([EMBEDDED_DEFAULT_TAG])

#: Owner of the source, tree, link and scoring assets.
TAXOFORGE_TEAM = "team:taxoforge"
