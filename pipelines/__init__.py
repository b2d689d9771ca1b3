"""Dagster wiring of taxoforge: definitions, jobs, schedules, sensors and resources.

Domain logic lives in :mod:`taxoforge`; asset definitions in the top-level ``assets``
package (one module per domain, each exporting ``defs``)."""
