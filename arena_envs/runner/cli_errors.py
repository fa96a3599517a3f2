"""How the ``arena`` commands fail: a user error is one line on stderr and exit status 2
(``ARENA_DEBUG=1`` re-raises it, for the traceback); a run stopped by a failing policy or
environment says where its finished episodes are kept, exit status 1."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from arena_envs.core.cli_parser import OneLineParser as OneLineParser  # re-exported: the commands' parser
from arena_envs.core.extras import MissingExtra
from arena_envs.runner.policy_specs import SpecError
from arena_envs.runner.results import ResultsError


class UsageError(Exception):
    """A mistake in the command line or its inputs; reported without a traceback."""


#: A path given on the command line that cannot be used (a missing folder, a file where a folder goes...).
PATH_ERRORS = (FileNotFoundError, FileExistsError, PermissionError, NotADirectoryError, IsADirectoryError)

#: The exceptions a command reports as a user error (one line, status 2); MissingExtra: a feature whose
#: pip extra is not installed (the line names the pip command).
USER_ERRORS = (UsageError, SpecError, ResultsError, ValueError, KeyError, MissingExtra, *PATH_ERRORS)


def report_user_error(err: Exception) -> int:
    """Print ``err`` as ``arena: error: ...`` on stderr; the exit status 2."""
    if os.environ.get("ARENA_DEBUG"):
        raise err
    message: object = err
    if isinstance(err, KeyError) and err.args:
        message = err.args[0]
    elif isinstance(err, PATH_ERRORS) and err.filename is not None:
        message = (f"cannot use path {str(err.filename)!r}: {err.strerror}; "
                   "give a path that exists and that you can write to")
    print(f"arena: error: {message}", file=sys.stderr)
    return 2


def report_run_stopped(err: Exception, out: str | Path) -> int:
    """Print why a run stopped and that its finished episodes in ``out`` are kept; the exit status 1."""
    print(f"arena: run stopped: {err}\narena: finished episodes are kept in {out}; "
          "run the same command again to resume", file=sys.stderr)
    return 1


def report_run_interrupted(out: str | Path) -> int:
    """Print, after a Ctrl-C, that the finished episodes in ``out`` are kept and how to resume; the
    exit status 130 (128 + SIGINT, as a shell reports it)."""
    print(f"\narena: interrupted; finished episodes are kept in {out}; run the same command again to resume",
          file=sys.stderr)
    return 130
