"""What all games share: base AEC class, text space, answers and constraints, parsing, records, the
simultaneous-move phase, entry points, frames, package data and optional dependencies (extras)."""
from arena_envs.core.answers import AnswerConstraint, Answered, InvalidAnswer, encodable, excerpt, native_index
from arena_envs.core.entry_points import entry_points, parallel_entry_point
from arena_envs.core.extras import MissingExtra, needs_extra, require
from arena_envs.core.frame_render import FRAME_MODES, FrameWindow, frame_array
from arena_envs.core.package_data import data_file, read_bytes, read_text
from arena_envs.core.policy import Policy, PolicyFault
from arena_envs.core.records import EpisodeRecord
from arena_envs.core.simultaneous import SimultaneousPhase
from arena_envs.core.spaces import UnicodeText
from arena_envs.core.text_env import TextAECEnv

__all__ = [
    "FRAME_MODES",
    "AnswerConstraint",
    "Answered",
    "EpisodeRecord",
    "FrameWindow",
    "InvalidAnswer",
    "MissingExtra",
    "Policy",
    "PolicyFault",
    "SimultaneousPhase",
    "TextAECEnv",
    "UnicodeText",
    "data_file",
    "encodable",
    "entry_points",
    "excerpt",
    "frame_array",
    "native_index",
    "needs_extra",
    "parallel_entry_point",
    "read_bytes",
    "read_text",
    "require",
]
