"""A suite's evaluation protocol, declared as data: its headline, its recent history and its paper's category order.

A public benchmark is scored the way its paper scores it, or its numbers are
not comparable with anyone's. LoCoMo as mem0 evaluates it reports categories
1-4 and leaves the adversarial category out of the headline; LongMemEval
reports its abstention questions as a score of their own. And a
``history_only`` arm that sees no history at all (an imported question has no
``probe.history``) always abstains: it wins every abstention probe and loses
every answerable one, which makes the verdict an artefact of the protocol.

A suite says all this under ``protocol:`` in its ``_defaults.yaml`` (merged into
every scenario like ``categories``)::

    protocol:
      name: LoCoMo as mem0 evaluates it (categories 1-4)
      headline: [single_hop, multi_hop, temporal, open_domain]
      reported_apart: [adversarial]
      apart_gates: false          # the adversarial line is shown, its own unsupported rate, and never decides
      recent_history: {kind: last_sessions, count: 1}
      category_order: [single_hop, multi_hop, temporal, open_domain, adversarial]

A suite without ``protocol`` keeps the built-in behaviour exactly: every
category in the headline (``all``), ``probe.history`` as the only recent
history, categories in name order.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

_Category = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")]

#: Category names the aggregate tables use for their own rows; a protocol may not name them.
RESERVED_CATEGORIES = frozenset({"all", "headline"})


class RecentHistory(BaseModel):
    """What "recent history" the probe sees besides ``probe.history``, in every arm but ``full_history``.

    ``last_sessions``: the last ``count`` earlier in-scope sessions, whole, each
    opened by its date marker (the session the probe follows); ``last_turns``:
    the last ``count`` turns of the earlier in-scope sessions; ``none``: nothing
    but ``probe.history`` (a suite must say so: it is how a ``history_only`` arm
    ends up with no history at all). ``full_history`` pastes every earlier
    session already, so it adds nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["none", "last_sessions", "last_turns"]
    count: int | None = Field(None, ge=1, le=100_000, description="Sessions or turns; required unless kind is none")

    @model_validator(mode="after")
    def _count_matches_kind(self) -> RecentHistory:
        if self.kind == "none" and self.count is not None:
            raise ValueError("recent_history kind none takes no count")
        if self.kind != "none" and self.count is None:
            raise ValueError(f"recent_history kind {self.kind} needs a count (how many sessions or turns, 1 or more)")
        return self


class Protocol(BaseModel):
    """How a suite's paper scores it: which categories make the headline, what recent history means, their order.

    The headline is the accuracy the verdict decides on: the scenarios whose
    category is in ``headline`` (empty: every category not reported apart),
    minus abstention probes when ``abstention_apart``, minus ``judge_only``
    categories when no judge ran. Everything else is still scored and shown,
    in its own rows.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=200, description="Whose protocol this is, for the report")
    headline: list[_Category] = Field(
        default_factory=list, description="Categories whose accuracy is the verdict's (empty: all not reported apart)")
    reported_apart: list[_Category] = Field(
        default_factory=list, description="Categories scored and shown apart, never in the headline")
    abstention_apart: bool = Field(
        False, description="Abstention probes (expect.abstain) leave the headline and are reported as an abstention "
                           "score of their own")
    apart_gates: bool = Field(
        False, description="Whether the lines of the groups reported apart (each reported_apart category; the "
                           "abstention probes with abstention_apart) gate the verdict; false: shown, never deciding")
    judge_only: list[_Category] = Field(
        default_factory=list, description="Rubric categories only a judge can score: without --judge-model they are "
                                          "'not judged', out of every accuracy")
    recent_history: RecentHistory = Field(description="What recent history the probe sees (required: say none explicitly)")
    category_order: list[_Category] = Field(
        default_factory=list, description="The paper's order of the categories, for the report's tables")

    @model_validator(mode="after")
    def _consistent(self) -> Protocol:
        for name, values in (("headline", self.headline), ("reported_apart", self.reported_apart),
                             ("judge_only", self.judge_only), ("category_order", self.category_order)):
            if len(set(values)) != len(values):
                raise ValueError(f"protocol {name} names a category twice: {values}")
            reserved = RESERVED_CATEGORIES.intersection(values)
            if reserved:
                raise ValueError(f"protocol {name} names {sorted(reserved)}: reserved for the report's own rows")
        both = set(self.headline) & set(self.reported_apart)
        if both:
            raise ValueError(f"protocol: {sorted(both)} both in headline and reported_apart; a category is one or "
                             "the other")
        return self

    def names(self) -> set[str]:
        """Every category the protocol names (checked against the suite's categories)."""
        return {*self.headline, *self.reported_apart, *self.judge_only, *self.category_order}

    def in_headline(self, category: str, *, abstain: bool, judged: bool) -> bool:
        """Whether a scenario of ``category`` counts in the headline accuracy.

        Example:
            >>> p = Protocol(name="x", reported_apart=["adversarial"], recent_history={"kind": "none"})
            >>> p.in_headline("single_hop", abstain=False, judged=False), p.in_headline("adversarial", abstain=True, judged=False)
            (True, False)
        """
        if category in self.reported_apart:
            return False
        if self.headline and category not in self.headline:
            return False
        if self.abstention_apart and abstain:
            return False
        return judged or category not in self.judge_only

    def order(self, categories: list[str] | set[str]) -> list[str]:
        """``categories`` in the paper's order; those it does not list follow, by name."""
        rank = {name: i for i, name in enumerate(self.category_order)}
        return sorted(categories, key=lambda c: (rank.get(c, len(rank)), c))
