"""The crosswalk domain: which ids of the configured taxonomies name the same taxon.

``assets.py``       Wikidata's identifier claims, the WordNet 3.0 → 3.1 bridge, the crosswalk
                    asset's factory and its blocking conflicts check
``definitions.py``  the crosswalk over the taxonomies the deployment configures
"""

#: The asset group ``crosswalk`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "Which ids of the taxonomies name the same taxon: Wikidata's identifier claims (iNaturalist, "
    "Catalogue of Life, GBIF, NCBI, WordNet 3.1), name links between the configured trees and "
    "ImageNet-1k's WordNet 3.0 synsets bridged to 3.1 by sense keys, one versioned table per release, "
    "its conflicts bounded by a blocking check."
)
