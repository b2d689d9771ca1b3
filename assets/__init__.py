"""The Dagster definitions of taxoforge, one package per domain, loaded by one call.

==================  ==========================================================================
``wordnet/``        WordNet 3.0's noun files (observed), the noun graph and tree
``imagenet/``       ImageNet-1k's classes (observed), linked to WordNet, and their subtree
``biology/``        iNaturalist (observed), the Catalogue of Life (with its rebuild schedule),
                    iNat21, species labels, names from Wikidata and ColDP
``wikidata/``       the subclass-of taxonomy over SPARQL or from a dump (with their rebuild
                    schedules), the Spark reading of the whole dump
``crosswalk/``      which ids of the configured taxonomies name the same taxon
``snapshots/``      every configured taxonomy's tree published to the snapshot store
``scoring/``        model-output files scored against a snapshot: assets, jobs, the sensor, the
                    folder routing
``evaluation_sets/`` multiple-choice question sets drawn from a snapshot
``operations/``     the deployment self-test, its heartbeat schedule, the run-failure sensor
``common/``         what the domains share: the Parquet IO manager, the resource classes, the
                    blocking tree checks, the automation conditions, the rebuild schedules'
                    machinery, the UI metadata helpers, the tags, the deployment's environment
==================  ==========================================================================

Each domain keeps its assets, checks, jobs, schedules and sensors together; a module defines
them at module scope, or, where they follow the deployment's configuration (which taxonomies
are configured, the rebuilds' crons), in a ``@dg.definitions`` function that reads
:func:`assets.common.deployment.deployment_environ`. :mod:`pipelines.definitions` loads the
whole package with Dagster's defs-folder loader (the ``dg.ComponentTree`` of
``load_from_defs_folder``), so a new module or domain is picked up without being named anywhere.

Imports run one way: ``pipelines`` → ``assets`` → ``taxoforge``; nothing here imports
``pipelines``. A domain may import ``common`` and another domain's modules; ``common``
imports no domain.
"""
