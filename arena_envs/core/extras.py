"""Optional dependencies: a feature whose extra (``[project.optional-dependencies]`` of pyproject.toml:
``llm``, ``vllm``, ``rl``, ``ray``, ``render``, ...) is not installed fails with :class:`MissingExtra`,
one line naming the feature, the missing module and the pip command::

    with needs_extra("ray", "arena run --ray"):
        import ray

    require("llm", "the hf: player", "torch", "transformers")  # a check that imports nothing

The ``arena`` commands report it as a user error (one line on stderr, exit status 2).
"""
from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager


def install_command(extra: str) -> str:
    """The pip command that installs ``extra``: ``pip install 'arena-envs[llm]'``."""
    return f"pip install 'arena-envs[{extra}]'"


class MissingExtra(ModuleNotFoundError):
    """``feature`` needs the pip extra ``extra``; ``name`` is the module that is not installed."""

    def __init__(self, feature: str, extra: str, module: str | None = None):
        missing = f" ({module} is not installed)" if module else ""
        super().__init__(f"{feature} needs the {extra} extra{missing}: {install_command(extra)}", name=module)
        self.feature = feature
        self.extra = extra

    def __reduce__(self) -> tuple[type[MissingExtra], tuple[str, str, str | None]]:
        return type(self), (self.feature, self.extra, self.name)


@contextmanager
def needs_extra(extra: str | None, feature: str) -> Iterator[None]:
    """Run the block (the imports of ``feature``); a ``ModuleNotFoundError`` raised in it (a
    :class:`MissingExtra` of a deeper module too) becomes :class:`MissingExtra` for ``feature`` and
    ``extra``, naming the missing module. With ``extra`` None (a feature of no extra of this project) it
    passes as it is."""
    try:
        yield
    except ModuleNotFoundError as err:
        if extra is None:
            raise
        raise MissingExtra(feature, extra, err.name) from err


def require(extra: str, feature: str, *modules: str) -> None:
    """Raise :class:`MissingExtra` unless every one of ``modules`` (top-level names) is installed; nothing
    is imported."""
    with needs_extra(extra, feature):
        for module in modules:
            if importlib.util.find_spec(module) is None:
                raise ModuleNotFoundError(f"No module named {module!r}", name=module)
