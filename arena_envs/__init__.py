"""arena_envs: multi-agent games from five LLM-agent papers as PettingZoo AEC environments.

``arena_envs.auction_v0.env()`` etc. give the environments; importing the package registers them
in PettingZoo's registry as ``arena_envs/<name>-v<N>`` (``pettingzoo.make("aec", ...)``).
"""
from arena_envs.registration import ENVIRONMENTS, make, register_all

__version__ = "0.1.0"

register_all()

__all__ = ["ENVIRONMENTS", "__version__", "make"]
