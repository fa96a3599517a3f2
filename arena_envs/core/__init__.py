"""What all games share: base AEC class, text space, answers and constraints, parsing, records, the
transcript and prompt options, the simultaneous-move phase, entry points, frames, package data and
optional dependencies (extras)."""
from arena_envs.core.answers import AnswerConstraint, Answered, InvalidAnswer, encodable, excerpt, native_index
from arena_envs.core.entry_points import entry_points, parallel_entry_point
from arena_envs.core.extras import MissingExtra, needs_extra, require
from arena_envs.core.frame_render import FRAME_MODES, FrameWindow, frame_array
from arena_envs.core.package_data import data_file, read_bytes, read_text
from arena_envs.core.policy import Policy, PolicyFault
from arena_envs.core.prompt_options import DEFAULT_HISTORY_WINDOW, PromptOptions
from arena_envs.core.records import EpisodeRecord
from arena_envs.core.simultaneous import SimultaneousPhase
from arena_envs.core.spaces import UnicodeText
from arena_envs.core.text_env import TextAECEnv
from arena_envs.core.transcript import (
    COT_TRIGGER,
    SharedTranscripts,
    Transcript,
    correction_note,
    report_block,
    request_block,
    rules_block,
)

__all__ = [
    "COT_TRIGGER",
    "DEFAULT_HISTORY_WINDOW",
    "FRAME_MODES",
    "AnswerConstraint",
    "Answered",
    "EpisodeRecord",
    "FrameWindow",
    "InvalidAnswer",
    "MissingExtra",
    "Policy",
    "PolicyFault",
    "PromptOptions",
    "SharedTranscripts",
    "SimultaneousPhase",
    "TextAECEnv",
    "Transcript",
    "UnicodeText",
    "correction_note",
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
    "report_block",
    "request_block",
    "require",
    "rules_block",
]
