"""The WordNet domain: WordNet 3.0's noun files, observed daily, the noun graph and one rooted
tree (``assets.py``, with the tree's blocking checks)."""
