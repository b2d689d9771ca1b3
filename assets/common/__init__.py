"""What every asset domain shares, below the domains: the Parquet IO manager, the resource
classes, the blocking tree checks, the automation conditions, the machinery of the rebuild
schedules, the UI metadata helpers, the tags and owners, and the environment the code location
is built for.

Imports run one way: ``pipelines`` → ``assets`` → ``taxoforge``. Modules here import
``taxoforge`` and Dagster only, never a domain module of ``assets`` nor ``pipelines``, and
define no asset, job, schedule or sensor at module scope.
"""
