"""Prompt template sets of the γ-Bench games (the paper's robustness study of templates, V1-V5).

A variant rewrites a game's description (the intro line and the numbered rules, the stable prefix
of every prompt); round reports, requests and the JSON answer format stay the same, so answers
parse identically under every variant. ``"v1"`` is the environments' own wording. Variants are
pluggable: pass a :class:`PromptVariant` as ``prompt_variant=`` or register it under a name::

    register_prompt_variant(TemplateVariant("terse", {
        "guess_two_thirds_v0": ("{n_players} players, {n_rounds} rounds.",
                                ["Pick a whole number from {min_value} to {max_value}.",
                                 "Closest to {ratio_text} of the mean wins."]),
    }))
    env = guess_two_thirds_v0.env(prompt_variant="terse")

The paper's V2-V5 texts are not shipped (they are the authors' wording); the mechanism is what
the robustness experiment needs, with any rephrasing a user supplies.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from arena_envs.core.answers import excerpt
from arena_envs.gamma.prompt_options import PromptOptions


@runtime_checkable
class PromptVariant(Protocol):
    """Rewrites a game's description block; ``name`` goes into the episode's config."""

    name: str

    def describe(self, game: str, params: Mapping[str, Any], intro: str, rules: Sequence[str]) -> tuple[str, list[str]]:
        """The (intro, rules) to show for ``game`` with ``params``, given the V1 ``intro`` and ``rules``."""
        ...


class DefaultVariant:
    """V1: the environments' own description, unchanged."""

    name = "v1"

    def describe(self, game: str, params: Mapping[str, Any], intro: str, rules: Sequence[str]) -> tuple[str, list[str]]:
        return intro, list(rules)


class TemplateVariant:
    """A rephrasing given as ``str.format`` templates over the game's ``params()`` (the history
    schema's parameters, e.g. ``n_players``, ``ratio_text``, ``golds``), per game name."""

    def __init__(self, name: str, templates: Mapping[str, tuple[str, Sequence[str]]]):
        if not name or not isinstance(name, str):
            raise ValueError(f"a prompt variant needs a non-empty name, got {excerpt(name)}")
        self.name = name
        self.templates = {game: (intro, list(rules)) for game, (intro, rules) in templates.items()}

    def describe(self, game: str, params: Mapping[str, Any], intro: str, rules: Sequence[str]) -> tuple[str, list[str]]:
        if game not in self.templates:
            raise ValueError(f"prompt variant {excerpt(self.name)} has no text for {game}; "
                             f"it covers {', '.join(sorted(self.templates)) or 'no game'}")
        intro_t, rules_t = self.templates[game]
        try:
            return intro_t.format(**params), [rule.format(**params) for rule in rules_t]
        except (KeyError, IndexError) as err:
            raise ValueError(f"prompt variant {excerpt(self.name)} for {game} uses {err} which is not among the "
                             f"game's parameters {sorted(params)}") from None


PROMPT_VARIANTS: dict[str, PromptVariant] = {"v1": DefaultVariant()}


def register_prompt_variant(variant: PromptVariant) -> None:
    """Make ``variant`` available by its name (``prompt_variant="NAME"``, also from ``--env-arg``)."""
    if not isinstance(variant, PromptVariant):
        raise TypeError(f"expected a PromptVariant (a name and a describe method), got {excerpt(variant)}")
    PROMPT_VARIANTS[variant.name] = variant


def resolve_prompt_variant(variant: str | PromptVariant) -> PromptVariant:
    if isinstance(variant, str):
        try:
            return PROMPT_VARIANTS[variant]
        except KeyError:
            registered = ", ".join(sorted(PROMPT_VARIANTS))
            raise ValueError(f"unknown prompt_variant {excerpt(variant)}; registered: {registered}") from None
    if isinstance(variant, PromptVariant):
        return variant
    raise ValueError(f"prompt_variant must be a registered name or a PromptVariant, got {excerpt(variant)}")


@dataclass(frozen=True)
class GammaPromptOptions(PromptOptions):
    """The core prompt options plus γ-Bench's template set (``prompt_variant``)."""

    variant: PromptVariant = field(default_factory=DefaultVariant)  #: wording of the description

    def description(self, game: str, params: Mapping[str, Any], intro: str, rules: Sequence[str],
                    identity: str | None = None) -> str:
        """The rules block of ``game`` as this prompt's variant words it, with the persona."""
        intro, rules = self.variant.describe(game, params, intro, rules)
        return self.rules(intro, rules, identity)
