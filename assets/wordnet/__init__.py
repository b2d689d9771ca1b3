"""The WordNet domain: WordNet 3.0's noun files, observed daily, the noun graph and one rooted
tree (``assets.py``, with the tree's blocking checks)."""

#: The asset group ``wordnet`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "WordNet 3.0 nouns: the observed database files → the noun graph → one rooted tree."
)
