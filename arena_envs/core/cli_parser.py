"""The argument parser of the ``arena`` commands: an error is one line on stderr and exit status 2.

It lives in ``core`` so that every layer that parses a command line (the runner, the analysis
commands such as ``arena rescore``, the packages' ``arena serve``) uses the same one.
"""
from __future__ import annotations

import argparse
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (the usage is left to ``--help``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
