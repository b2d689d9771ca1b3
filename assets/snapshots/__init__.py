"""The snapshots domain: every configured taxonomy's tree frozen and published to the store.

``assets.py``       the snapshot asset of a tree (published only after its checks pass)
``taxonomies.py``   which taxonomies the deployment configures (the embedded three always)
``definitions.py``  one snapshot asset per configured taxonomy
"""
