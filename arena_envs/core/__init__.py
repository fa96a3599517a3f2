"""What all games share: base AEC class, text space, answers and constraints, parsing, records."""
from arena_envs.core.answers import AnswerConstraint, InvalidAnswer
from arena_envs.core.policy import Policy
from arena_envs.core.records import EpisodeRecord
from arena_envs.core.spaces import UnicodeText
from arena_envs.core.text_env import TextAECEnv

__all__ = ["AnswerConstraint", "EpisodeRecord", "InvalidAnswer", "Policy", "TextAECEnv", "UnicodeText"]
