"""The snapshots domain: every configured taxonomy's tree frozen and published to the store.

``assets.py``       the snapshot asset of a tree (published only after its checks pass)
``taxonomies.py``   which taxonomies the deployment configures (the embedded three always)
``definitions.py``  one snapshot asset per configured taxonomy
"""

#: The asset group ``snapshots`` in one paragraph (the UI shows it under each asset's description).
GROUP_DESCRIPTION = (
    "Every configured taxonomy frozen and published to the snapshot store, versioned by content; "
    "published only after the tree's blocking checks pass."
)
