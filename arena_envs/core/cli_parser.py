"""The argument parser of the ``arena`` commands: an error is one line on stderr and exit status 2.

It lives in ``core`` so that every layer that parses a command line (the runner, the analysis
commands such as ``arena rescore``, the packages' ``arena serve``) uses the same one.
"""
from __future__ import annotations

import argparse
from typing import NoReturn

#: The longest message the parser prints (argparse quotes the values it refuses whole).
MAX_MESSAGE_CHARS = 240


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one short line (the usage is left to ``--help``; the message
    cut to :data:`MAX_MESSAGE_CHARS`), exit status 2."""

    def error(self, message: str) -> NoReturn:
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS - 3] + "..."
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
