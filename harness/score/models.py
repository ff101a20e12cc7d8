"""What scoring gives: every score of one sample (:class:`SampleScores`), the only thing aggregation reads.

The conventions that fill these fields are in :mod:`harness.score.scoring`
(and ``docs/summary-json.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    pass




Outcome = Literal["correct", "wrong", "abstained_correctly", "abstained_wrongly", "not_judged", "unlabelled", "error"]
"""``not_judged``: a category the suite's protocol grades by a judge only, scored without one (no correctness).
``unlabelled``: a probe without gold (``expect.unlabelled``, logged traffic): never right or wrong, counted apart."""
# Outcomes that count as right: an answer that passed, or an abstention where abstaining was expected.
CORRECT_OUTCOMES: frozenset[str] = frozenset({"correct", "abstained_correctly"})


class Score(BaseModel):
    """One named score with the reason a human reads."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: bool | float | int | None
    passed: bool | None = Field(None, description="None when the score is informational or not applicable")
    reason: str


ClaimKind = Literal["leakage", "stale", "invented", "someone_else", "forgotten", "unknown_item_id",
                   "undisclosed_item_id", "answered_unanswerable", "ungrounded"]
#: Every kind of unsupported claim, in the order reports list them (see ``docs/summary-json.md``).
#: ``forgotten``: a fact the user asked to forget, repeated (``retained_after_forget`` in the answer).
CLAIM_KINDS: tuple[str, ...] = ("leakage", "stale", "invented", "someone_else", "forgotten", "unknown_item_id",
                                "undisclosed_item_id", "answered_unanswerable", "ungrounded")
CLAIM_EXCERPT_CHARS = 200


class UnsupportedClaim(BaseModel):
    """One assertion nothing visible supports; ``kind`` says how it was found (reports split by it)."""

    model_config = ConfigDict(frozen=True)

    kind: ClaimKind
    text: str = Field(description="The canary, id or specific claimed; for answered_unanswerable the answer's start")


class ToolLeak(BaseModel):
    """A disclosure across scope or policy: what only the Host can cause (a Host defect, must be 0).

    ``archived_item`` is kept for records scored before forgetting was its
    own failure; an archived item of the probe's scope is now a
    :class:`RetainedFact`.
    """

    model_config = ConfigDict(frozen=True)

    call_id: str
    kind: Literal["out_of_scope_item", "archived_item", "policy_denied_read", "leakage_canary"]
    detail: str


class RetainedFact(BaseModel):
    """A forgotten fact that reached the model at the probe (``retained_after_forget``), in its own scope.

    Not a Host defect: the memory system (written by the agent, or holding
    the fact in the probe's scope) still served what the user asked to forget.
    """

    model_config = ConfigDict(frozen=True)

    call_id: str | None = Field(description="The tool call that returned it; None: the prompt held it (pasted or injected)")
    kind: Literal["archived_item", "forgotten_fact"] = Field(
        description="archived_item: a scenario item stored archived; forgotten_fact: a forgotten canary's text")
    detail: str = Field(description="The item id or the fact's text")


class SampleScores(BaseModel):
    """Every score of one sample; aggregation reads only these."""

    model_config = ConfigDict(frozen=True)

    sample_id: str
    scenario_id: str
    category: str
    arm: str
    model: str
    epoch: int
    status: Literal["ok", "error"]
    outcome: Outcome
    should_abstain: bool
    abstained: bool | None = Field(None, description="None for error samples")
    continuity_correct: bool | None = Field(None, description="The deciding result (judge when used)")
    pattern_correct: bool | None = Field(None, description="The pattern result, kept when a judge decided")
    judge_verdict: Literal["pass", "fail"] | None = None
    judge_reason: str | None = None
    grounding: Literal["grounded", "ungrounded", "malformed"] | None = Field(
        None, description="The grounding judge's finding; None when it did not run (no judge, abstained, error)")
    adherence: bool | None = Field(None, description="None when the scenario sets no adherence checks")
    token_f1: float | None = Field(
        None, description="Informational token F1 against expect.f1_reference as LoCoMo computes it (stemmed; "
        "multi_hop per sub-answer; never part of correctness); None without a reference or for error samples")
    bleu1: float | None = Field(
        None, description="Informational BLEU-1 against expect.f1_reference (the mem0 paper's LoCoMo metric); "
        "None as token_f1")
    session_retrieval: dict[str, float] | None = Field(
        None, description="LongMemEval's session-level recall_any@k, recall_all@k and ndcg@k (k in SESSION_KS) of "
        "the sessions the tools' items cite, on LongMemEval's population; None without tools, an agent-written "
        "memory, evidence sessions, or a target turn on the user side (LongMemEval's retrieval evaluation skips it)")
    ours_session_retrieval: dict[str, float] | None = Field(
        None, description="The same figures on our population: every question whose relevant items cite a session, "
        "on either side; None without tools, an agent-written memory or evidence sessions")
    unsupported_claims: list[UnsupportedClaim] = Field(default_factory=list)
    answer_leaks: list[str] = Field(default_factory=list, description="Leakage canaries in the final answer")
    tool_leaks: list[ToolLeak] = Field(default_factory=list)
    out_of_scope_attempts: list[str] = Field(
        default_factory=list, description="Ids of other workspaces' items asked of memory_get and refused by the Host, one per call")
    retrieved_items: list[str] = Field(default_factory=list, description="The ids the tools are credited with (harness.score.credit)")
    uncredited_items: list[str] = Field(
        default_factory=list, description="'id: why' per id a tool reported and was not credited with: beyond the "
        "budget's top_k in its call, or an item its result did not show (a system over-crediting; harness.score.credit)")
    retrieved_precision: float | None = None
    retrieved_recall: float | None = None
    tool_calls: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_result_tokens: int = 0
    tool_result_chars: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    tool_latency_s: float = Field(0.0, description="The tool calls' own time (memory_search, memory_get), part of latency_s")
    cached: bool = Field(False, description="Every model call was served from the response cache (latency is a replay)")
    tools_offered: int = Field(0, description="How many tools the arm offered the model at the probe")
    write_model_calls: int = Field(0, description="Model calls of the write phase (arms whose agent writes memory); not in model_calls")
    write_tool_calls: int = Field(0, description="Write calls the agent made before the probe")
    writes_ok: int = Field(0, description="Write calls that succeeded (status ok)")
    write_holds_answer: bool | None = Field(
        None, description="Some successful write states the expected fact; None without a write phase or expected strings")
    write_prompt_tokens: int = Field(0, description="Prompt tokens of the write phase; not in prompt_tokens")
    write_completion_tokens: int = Field(0, description="Completion tokens of the write phase; not in completion_tokens")
    # The write path's own scores (harness.score.writes): what was written, and where a failure happened.
    memories_written: int = Field(0, description="Save calls of the write phase that stored something")
    write_duplicates: int = Field(0, description="Save calls repeating a text already saved, or reported unchanged")
    writes_rejected: int = Field(0, description="Save calls the memory system refused (status not ok)")
    forgets_requested: int = Field(0, description="Earlier sessions in which the user asked to forget something")
    forgets_done: int = Field(0, description="Of those, sessions whose write run made a forget call that ran (ok or not_found)")
    # Forgetting as its own property (harness.score.forgetting).
    retained_after_forget: list[RetainedFact] = Field(
        default_factory=list, description="Forgotten facts that reached the model at the probe, by where")
    answer_forgotten: list[str] = Field(default_factory=list, description="Forgotten facts repeated in the final answer")
    forget_requests: int = Field(0, description="User turns of the earlier sessions asking to forget (declared or "
                                                "addressed to the assistant; every arm)")
    forget_calls: int = Field(0, description="Forget calls of the write phase")
    forgets_removed: int = Field(0, description="Forget calls that removed something (status ok)")
    forgotten_facts: int = Field(0, description="The scenario's forgotten facts (forgotten canaries and archived-only leakage canaries)")
    forget_notes: list[str] = Field(
        default_factory=list, description="What went wrong with forgetting, in words (a forget under another name, "
        "a request without a forget call)")
    written_holds_expected: bool | None = Field(None, description="The stored memory states the expected answer")
    retrieved_holds_expected: bool | None = Field(None, description="The probe's tool results state the expected answer")
    scores: list[Score] = Field(default_factory=list)

    @property
    def unsupported(self) -> bool:
        return bool(self.unsupported_claims)

    @property
    def answered(self) -> bool | None:
        return None if self.abstained is None else not self.abstained
