"""The deployment a code location is built for: the environment the domains read while they are
loaded.

Which taxonomies get snapshot and scoring assets, when the rebuilds run and whether schedules
start all follow the environment (``$TAXOFORGE_*``). Dagster loads the domains' modules itself
(Dagster's defs-folder loader, in :mod:`pipelines.definitions`) and hands a domain's
``@dg.definitions`` function nothing but its load context, so the environment reaches them
here: :func:`deployment_environ` is ``os.environ`` unless the code location is being built
inside :func:`built_for` another mapping — as the tests build it for a deployment that
configured nothing, or everything.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["built_for", "deployment_environ"]

_ENVIRON: ContextVar[Mapping[str, str] | None] = ContextVar("taxoforge_deployment_environ", default=None)


def deployment_environ() -> Mapping[str, str]:
    """The environment the code location is being built for.

    Returns
    -------
    Mapping
        The mapping :func:`built_for` names, else ``os.environ``.
    """
    environ = _ENVIRON.get()
    return os.environ if environ is None else environ


@contextmanager
def built_for(environ: Mapping[str, str] | None) -> Iterator[None]:
    """Build the code location for ``environ`` inside this block (None: ``os.environ``).

    Parameters
    ----------
    environ : Mapping or None
        The environment the domains read.

    Yields
    ------
    None
        While the block runs.
    """
    token = _ENVIRON.set(environ)
    try:
        yield
    finally:
        _ENVIRON.reset(token)
