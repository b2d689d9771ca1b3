"""The crosswalk domain: which ids of the configured taxonomies name the same taxon.

``assets.py``       Wikidata's identifier claims, the WordNet 3.0 → 3.1 bridge, the crosswalk
                    asset's factory and its blocking conflicts check
``definitions.py``  the crosswalk over the taxonomies the deployment configures
"""
