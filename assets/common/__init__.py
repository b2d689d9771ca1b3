"""What every asset domain shares, below the domains: the Parquet IO manager, the resource
classes, the blocking tree checks, the UI metadata helpers and the tags and owners.

Imports run one way: ``pipelines`` → ``assets`` → ``taxoforge``. Modules here import
``taxoforge`` and Dagster only, never a domain module of ``assets`` nor ``pipelines``.
"""
