"""Dagster asset definitions, one module per domain.

Each module exports ``defs: dagster.Definitions`` holding its assets, asset checks, jobs,
schedules and sensors — never resources, which :mod:`pipelines.resources` defines once for
all domains. :mod:`pipelines.definitions` discovers the modules and merges them.
"""
