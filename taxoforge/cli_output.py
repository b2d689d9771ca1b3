"""What every ``taxoforge`` command does with its results and its errors, in one place.

* :func:`emit_json` — one JSON document on stdout (NaN and infinities as ``null``, keys
  sorted, non-ASCII kept), the ``--json`` output of every command.
* :func:`fail` — end a command with ``error: …`` on stderr (or ``{"error", "exit_code",
  "kind"}`` as JSON) and the exit code.
* :class:`CommandFailed` — raise it anywhere below a command to end it that way.
* :func:`handle_errors` — decorator: snapshot and download errors end with their documented
  exit code (:mod:`taxoforge.snapshots.errors`: 3 not found, 4 verification failed, 8
  download interrupted …), the ``usage_errors`` a command names with exit code 2, never
  with a traceback.
"""

from __future__ import annotations

import functools
import json
import sys

import click

__all__ = ["CommandFailed", "emit_json", "fail", "handle_errors", "json_safe"]


class CommandFailed(Exception):
    """End the command with ``message`` and exit code ``code`` (``kind`` names the error in JSON)."""

    def __init__(self, message: str, code: int, kind: str = "error") -> None:
        super().__init__(message)
        self.code, self.kind = code, kind


def json_safe(obj):
    """``obj`` with NaN and infinite floats as None and every key a string."""
    if isinstance(obj, float):
        return None if obj != obj or obj in (float("inf"), float("-inf")) else obj
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def emit_json(obj) -> None:
    """Print ``obj`` as one JSON document on stdout."""
    click.echo(json.dumps(json_safe(obj), indent=2, sort_keys=True, default=str, ensure_ascii=False))


def fail(message: str, code: int, *, as_json: bool = False, kind: str = "error"):
    """End the command: ``error: message`` on stderr (or a JSON document on stdout), exit ``code``."""
    if as_json:
        emit_json({"error": message, "exit_code": code, "kind": kind})
    else:
        click.echo(f"error: {message}", err=True)
    sys.exit(code)


def handle_errors(usage_errors=()):
    """Decorator of a click command (whose ``as_json`` keyword, if any, picks the output):
    :class:`CommandFailed`, snapshot and download errors end with their exit code, the
    ``usage_errors`` (a tuple of exception classes, or a function returning one, so the
    command's module need not import them up front) with exit code 2 — one message, never a
    traceback."""

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            from taxoforge.files import DownloadError
            from taxoforge.snapshots.errors import SnapshotError

            try:
                return f(*args, **kwargs)
            except CommandFailed as e:
                err = e
            except (SnapshotError, DownloadError) as e:
                err = CommandFailed(str(e), getattr(e, "exit_code", 1), type(e).__name__)
            except Exception as e:
                if not isinstance(e, usage_errors() if callable(usage_errors) else usage_errors):
                    raise
                err = CommandFailed(str(e), 2, type(e).__name__)
            fail(str(err), err.code, as_json=kwargs.get("as_json", False), kind=err.kind)

        return wrapper

    return decorate
