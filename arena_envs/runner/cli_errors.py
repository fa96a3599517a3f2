"""How the ``arena`` commands fail: a user error is one line on stderr and exit status 2
(``ARENA_DEBUG=1`` re-raises it, for the traceback); a run stopped by a failing policy or
environment says where its finished episodes are kept and whether the same command resumes it
(not after a policy's own fault), exit status 1; an OS error (disk full,
read-only, permission) is one line naming the path and the cause, exit status 1."""
from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path

from arena_envs.core.cli_parser import OneLineParser as OneLineParser  # re-exported: the commands' parser
from arena_envs.core.extras import MissingExtra
from arena_envs.runner.episode import RunFault
from arena_envs.runner.policy_specs import SpecError
from arena_envs.runner.results import ResultsError


class UsageError(Exception):
    """A mistake in the command line or its inputs; reported without a traceback."""


#: A path given on the command line that cannot be used (a missing folder, a file where a folder goes...).
PATH_ERRORS = (FileNotFoundError, FileExistsError, NotADirectoryError, IsADirectoryError)

#: What an OS error's line adds to the system's words (Permission denied, Read-only file system...), by errno.
_CAUSES = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
           errno.EFBIG: "a file reached the size limit of this process"}

#: The exceptions a command reports as a user error (one line, status 2); MissingExtra: a feature whose
#: pip extra is not installed (the line names the pip command).
USER_ERRORS = (UsageError, SpecError, ResultsError, ValueError, KeyError, MissingExtra, *PATH_ERRORS)


def path_arg(value: str) -> str:
    """The ``type`` of a path option: the value as given; an empty or blank one is refused (it
    would silently mean the default path, or the current folder)."""
    if not value.strip():
        raise argparse.ArgumentTypeError(f"expects a path, got {value!r}; give a file or folder name, or leave the "
                                         "option out for its default")
    return value


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


def report_os_error(err: OSError) -> int:
    """Print an OS error of a command (disk full, read-only folder, no permission...) as one line
    naming the path and the cause; the exit status 1. What a run committed before it is kept, and
    the same command resumes it once the cause is gone (``arena train``: with ``--resume``)."""
    if os.environ.get("ARENA_DEBUG"):
        raise err
    cause = err.strerror or str(err) or type(err).__name__
    if err.errno in _CAUSES:
        cause = f"{cause} ({_CAUSES[err.errno]})"
    where = "" if err.filename is None else f"{str(err.filename)!r}: "
    print(f"arena: error: {where}{cause}; what finished is kept: fix this, then run the command again to resume",
          file=sys.stderr)
    return 1


def report_run_stopped(err: Exception, out: str | Path) -> int:
    """Print why a run stopped, that its finished episodes in ``out`` are kept, and whether the same
    command resumes it (not after a policy's own fault: :class:`RunFault`); the exit status 1."""
    if isinstance(err, RunFault):
        advice = ("resuming will not help: the policy fails the same way whenever these episodes are played "
                  "again (its own fault, not a passing one); change the players or the --env-arg (the changed run "
                  "needs its own folder)")
    else:
        advice = "run the same command again to resume"
    print(f"arena: run stopped: {err}\narena: finished episodes are kept in {out}; {advice}", file=sys.stderr)
    return 1


def report_run_interrupted(out: str | Path) -> int:
    """Print, after a Ctrl-C, that the finished episodes in ``out`` are kept and how to resume; the
    exit status 130 (128 + SIGINT, as a shell reports it)."""
    print(f"\narena: interrupted; finished episodes are kept in {out}; run the same command again to resume",
          file=sys.stderr)
    return 130
