"""The Dagster code location: every domain module in ``assets`` merged, plus shared resources."""

from __future__ import annotations

import importlib
import pkgutil

import dagster as dg

import assets as assets_pkg
from pipelines.jobs import embedded_default_job
from pipelines.resources import default_resources


def domain_modules() -> list:
    """Every module of the ``assets`` package that exports ``defs``, in name order."""
    mods = []
    for info in sorted(pkgutil.iter_modules(assets_pkg.__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"assets.{info.name}")
        if isinstance(getattr(mod, "defs", None), dg.Definitions):
            mods.append(mod)
    return mods


def build_definitions(data_dir: str | None = None) -> dg.Definitions:
    return dg.Definitions.merge(
        *(m.defs for m in domain_modules()),
        dg.Definitions(jobs=[embedded_default_job], resources=default_resources(data_dir)),
    )


defs = build_definitions()
