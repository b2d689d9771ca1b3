"""What every ``taxoforge`` command does with its results and its errors, in one place.

* :func:`emit_json` — one JSON document on stdout (NaN and infinities as ``null``, keys
  sorted, non-ASCII kept), the ``--json`` output of every command.
* :func:`fail` — end a command with ``error: …`` on stderr (or ``{"error", "exit_code",
  "kind"}`` as JSON) and the exit code.
* :class:`CommandFailed` — raise it anywhere below a command to end it that way.
* :func:`handle_errors` — decorator: snapshot and download errors end with their documented
  exit code (:mod:`taxoforge.snapshots.errors`: 3 not found, 4 verification failed, 8
  download interrupted …), the ``usage_errors`` a command names with exit code 2, a file
  that cannot be written or read (no space left on the device, a file where a folder goes,
  no permission, a symbolic link or the working folder given as the folder to replace)
  with :data:`EXIT_FILE_SYSTEM` (11) and the path — never with a traceback.
* :func:`error_exit` — the message and exit code of one of those errors (for the command
  group, which ends the commands that do not use the decorator the same way).
* :class:`FiniteFloat` — the option type of a number that must be finite (click's
  ``FloatRange`` lets NaN through), within bounds.
"""

from __future__ import annotations

import errno
import functools
import json
import sys

import click

__all__ = ["CommandFailed", "emit_json", "fail", "handle_errors", "json_safe", "error_exit", "EXIT_FILE_SYSTEM",
           "command_words", "FiniteFloat"]

#: Where the ``taxoforge`` group keeps the words of the command line it was given
#: (``click.Context.meta``, shared by every command's context).
ARGV_KEY = "taxoforge.argv"


def command_words() -> list[str] | None:
    """The command line the running ``taxoforge`` command was given, as words
    (``["taxoforge", "score", …]``; what a record cites to run it again), or None outside a
    command.

    Returns
    -------
    list of str or None
    """
    ctx = click.get_current_context(silent=True)
    return list(ctx.meta[ARGV_KEY]) if ctx is not None and ARGV_KEY in ctx.meta else None

#: exit code of a command that could not write or read a local file (the message names it)
EXIT_FILE_SYSTEM = 11


class CommandFailed(Exception):
    """End the command with ``message`` and exit code ``code`` (``kind`` names the error in JSON).

    Parameters
    ----------
    message : str
        What to say.
    code : int
        The exit code.
    kind : str, optional
        The error's name in the JSON document.
    """

    def __init__(self, message: str, code: int, kind: str = "error") -> None:
        super().__init__(message)
        self.code, self.kind = code, kind


def json_safe(obj):
    """``obj`` with NaN and infinite floats as None and every key a string.

    Parameters
    ----------
    obj : object
        The object.

    Returns
    -------
    object
        ``obj`` with NaN and infinite floats as None and every key a string.
    """
    if isinstance(obj, float):
        return None if obj != obj or obj in (float("inf"), float("-inf")) else obj
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def emit_json(obj) -> None:
    """Print ``obj`` as one JSON document on stdout.

    Parameters
    ----------
    obj : object
        The object.
    """
    click.echo(json.dumps(json_safe(obj), indent=2, sort_keys=True, default=str, ensure_ascii=False))


def fail(message: str, code: int, *, as_json: bool = False, kind: str = "error"):
    """End the command: ``error: message`` on stderr (or a JSON document on stdout), exit ``code``.

    Parameters
    ----------
    message : str
        What to say.
    code : int
        The exit code.
    as_json : bool, optional
        Whether to print one JSON document instead of text.
    kind : str, optional
        The error's name in the JSON document.
    """
    if as_json:
        emit_json({"error": message, "exit_code": code, "kind": kind})
    else:
        click.echo(f"error: {message}", err=True)
    sys.exit(code)


def error_exit(e: BaseException) -> CommandFailed | None:
    """The :class:`CommandFailed` a snapshot, download or file-system error ends a command
    with (None for any other error): its documented exit code, and a message naming the
    URL or path.

    Parameters
    ----------
    e : BaseException
        The error a command raised.

    Returns
    -------
    CommandFailed or None
        The :class:`CommandFailed` a snapshot, download or file-system error ends a
        command with (None for any other error): its documented exit code, and a message
        naming the URL or path.
    """
    from taxoforge.files import DownloadError
    from taxoforge.snapshots.errors import SnapshotError

    if isinstance(e, CommandFailed):
        return e
    if isinstance(e, (SnapshotError, DownloadError)):
        return CommandFailed(str(e), getattr(e, "exit_code", 1), type(e).__name__)
    if isinstance(e, OSError) and e.errno != errno.EPIPE:  # a closed pipe is click's to handle
        where = e.filename if e.filename is not None else None
        what = e.strerror or str(e)
        if e.filename2 is not None:
            where = f"{e.filename} → {e.filename2}"
        return CommandFailed(f"{where}: {what}" if where else f"cannot write or read a file: {what}",
                             EXIT_FILE_SYSTEM, type(e).__name__)
    return None


def handle_errors(usage_errors=()):
    """Decorator of a click command (whose ``as_json`` keyword, if any, picks the output):
    :class:`CommandFailed`, snapshot and download errors end with their exit code, the
    ``usage_errors`` (a tuple of exception classes, or a function returning one, so the
    command's module need not import them up front) with exit code 2 — one message, never a
    traceback.

    Parameters
    ----------
    usage_errors : optional
        Exception classes that end the command with exit code 2 (or a function returning
        them, so the command's module need not import them up front).

    Returns
    -------
    callable
        The decorator.
    """

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
                err = error_exit(e)
            except Exception as e:
                if isinstance(e, usage_errors() if callable(usage_errors) else usage_errors):
                    err = CommandFailed(str(e), 2, type(e).__name__)
                elif isinstance(e, OSError) and error_exit(e) is not None:
                    err = error_exit(e)
                else:
                    raise
            fail(str(err), err.code, as_json=kwargs.get("as_json", False), kind=err.kind)

        return wrapper

    return decorate


class FiniteFloat(click.ParamType):
    """A float that is not NaN or infinite, optionally within [``low``, ``high``]: NaN passes
    every comparison, so click's ``FloatRange`` lets it through.

    Parameters
    ----------
    low : float, optional
        The least value allowed, if any.
    high : float, optional
        The greatest value allowed, if any.
    """

    name = "float"

    def __init__(self, low: float | None = None, high: float | None = None) -> None:
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        """The value as a finite float within the bounds, or a click usage error naming it.

        Parameters
        ----------
        value : object
            What the user gave.
        param : click.Parameter
            The option.
        ctx : click.Context
            The click context.

        Returns
        -------
        float
            The value.
        """
        import math

        try:
            x = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if (self.low is not None and x < self.low) or (self.high is not None and x > self.high):
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            self.fail(f"{value!r} is not in the range [{lo}, {hi}]", param, ctx)
        return x
