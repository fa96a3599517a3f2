"""arena_envs: multi-agent games from five LLM-agent papers as PettingZoo AEC environments.

``import arena_envs; env = arena_envs.auction_v0.env()``: every registered environment is an
attribute of the package, imported on first use (so ``import arena_envs`` stays light: no game,
torch, matplotlib or pygame is imported until asked for). Importing the package registers them in
PettingZoo's registry as ``arena_envs/<name>-v<N>`` (``pettingzoo.make("aec", ...)``).
"""
from types import ModuleType as _ModuleType

from arena_envs.registration import ENVIRONMENTS, make, register_all

__version__ = "0.1.0"

register_all()

__all__ = ["ENVIRONMENTS", "__version__", "make", *ENVIRONMENTS]


def __getattr__(name: str) -> _ModuleType:
    """``arena_envs.<name>`` for a registered environment: its entry module, imported once."""
    if name in ENVIRONMENTS:
        module = ENVIRONMENTS[name].entry_module()
        globals()[name] = module
        return module
    raise AttributeError(f"module 'arena_envs' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *ENVIRONMENTS})
