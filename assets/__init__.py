"""Dagster asset definitions, one module per domain (``wordnet``, ``imagenet``, ``biology``,
``wikidata``, ``snapshots``, ``scoring``, ``operations``), and :mod:`assets.common`, what
the domains share (IO manager, resource classes, tree checks, metadata helpers, tags).

A domain module defines its assets and asset checks at module scope (an asset, a check, or
a list of them); :mod:`pipelines.definitions` loads every module of this package with
``dagster.load_assets_from_package_module`` / ``load_asset_checks_from_package_module``.
Jobs, schedules, sensors and the configured resources belong to ``pipelines``.

Imports run one way: ``pipelines`` → ``assets`` → ``taxoforge``; nothing here imports
``pipelines``.
"""
