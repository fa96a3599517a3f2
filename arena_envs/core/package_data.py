"""Data files shipped inside a game's package (word pairs, maps), read with ``importlib.resources``.

A file lives next to the game's modules (``arena_envs/who_is_spy/data/pairs.json``) and is listed
in ``[tool.setuptools.package-data]`` of ``pyproject.toml`` so that wheels ship it::

    pairs = json.loads(read_text("arena_envs.who_is_spy", "data/pairs.json"))
"""
from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable


def data_file(package: str, name: str) -> Traversable:
    """The data file ``name`` (a ``/``-separated path) of ``package``; a missing one raises a
    one-line FileNotFoundError naming the package, the file and what the deepest folder holds."""
    try:
        node = resources.files(package)
    except ModuleNotFoundError:
        raise FileNotFoundError(f"no package {package!r} to read the data file {name!r} from") from None
    parts = name.split("/")
    for depth, part in enumerate(parts):
        child = node.joinpath(part)
        if not (child.is_file() if depth == len(parts) - 1 else child.is_dir()):
            folder = "/".join(parts[:depth]) or "its folder"
            held = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in node.iterdir()
                          if not entry.name.startswith(("_", ".")) and not entry.name.endswith((".py", ".pyc")))
            raise FileNotFoundError(f"package {package!r} ships no data file {name!r}; "
                                    f"{folder} holds: {', '.join(held) or 'no data files'}")
        node = child
    return node


def read_text(package: str, name: str, encoding: str = "utf-8") -> str:
    """The text of ``package``'s data file ``name``."""
    return data_file(package, name).read_text(encoding=encoding)


def read_bytes(package: str, name: str) -> bytes:
    """The bytes of ``package``'s data file ``name``."""
    return data_file(package, name).read_bytes()
