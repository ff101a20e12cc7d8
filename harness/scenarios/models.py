"""The scenario fixture format: pydantic models, one per YAML block.

A scenario tells one story: earlier sessions where durable facts were said,
the memory items extracted from them (plus distractors, superseded values and
other workspaces' canaries in the same store), and a later probe session whose
answer is checked against ``expect``. ``scenarios/README.md`` documents the
format with a worked example; ``recall-eval schema`` prints the JSON Schema
generated from these models.

Times are UTC milliseconds; YAML timestamps (``2026-03-02T10:00:00Z``) and
ISO strings are accepted and converted.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.scenarios.budget import RetrievalBudget
from harness.scenarios.field_types import CategoryName, Identifier, Millis, ScenarioId
from harness.scenarios.protocol import Protocol
from memory_tools import KeyOrigin, KeyType, Kind, LifecycleState, Origin, StatementType, TemporalType

SCENARIO_SCHEMA_VERSION: Final = 2
"""2: an item may quote its source turn instead of writing its content (:mod:`harness.scenarios.quotes`); 1 reads as before."""


def _key_shorthand(value: Any) -> Any:
    return {"key": value} if isinstance(value, str) else value


def _number_turns(turns: Any, prefix: str) -> Any:
    """Give every turn without an id the id ``<prefix><position>`` (1-based)."""
    if not isinstance(turns, list):
        return turns
    numbered = []
    for position, turn in enumerate(turns, start=1):
        if isinstance(turn, dict) and turn.get("id") is None:
            turn = {**turn, "id": f"{prefix}{position}"}
        elif isinstance(turn, Turn) and turn.id is None:
            turn = turn.model_copy(update={"id": f"{prefix}{position}"})
        numbered.append(turn)
    return numbered


SESSION_TURN_PREFIX = "t"
HISTORY_TURN_PREFIX = "h"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


class Category(StrEnum):
    """The built-in categories: what a scenario mainly measures; reports break results down by it.

    ``Scenario.category`` is a plain lowercase name; these are the names
    validation knows without a declaration. A suite declares its own (LoCoMo's
    ``single_hop``, ``multi_hop``...) under ``categories:`` in a ``_defaults.yaml``.
    """

    PREFERENCE = "preference"
    PROJECT_FACT = "project_fact"
    DECISION = "decision"
    CONSTRAINT = "constraint"
    KNOWLEDGE_UPDATE = "knowledge_update"
    TEMPORAL = "temporal"
    ABSTENTION = "abstention"
    LEAKAGE = "leakage"
    POLICY = "policy"
    MULTILINGUAL = "multilingual"
    RECENT_HISTORY = "recent_history"
    FORGETTING = "forgetting"


class Turn(_Model):
    """One message of a session.

    ``id`` defaults to ``t1``, ``t2``, ... by position in a session, and to
    ``h1``, ``h2``, ... in ``probe.history``; after loading it is always set.
    """

    id: Identifier | None = Field(None, description="Defaults to t<N> (sessions) or h<N> (probe.history), N from 1")
    role: Literal["user", "assistant"]
    speaker: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="Display name of who said it (\"Caroline\"), for conversations between named people; "
        "the model sees the name, the role stays user/assistant",
    )
    content: str = Field(min_length=1)


class Session(_Model):
    """An earlier conversation; the provenance of the items extracted from it."""

    id: Identifier = Field(description="Unique within the scenario; sources name it")
    workspace: Identifier | None = Field(None, description="Workspace key the session ran in; null for none")
    started_at: Millis = Field(description="Session start; must be before probe.started_at")
    turns: list[Turn] = Field(min_length=1)

    @field_validator("turns", mode="before")
    @classmethod
    def _default_turn_ids(cls, value: Any) -> Any:
        return _number_turns(value, SESSION_TURN_PREFIX)


class KeySpec(_Model):
    """A memory key. In YAML a bare string is shorthand for ``{key: <string>}``."""

    key: str = Field(description="Raw key text; the store normalizes it (NFC, trim, lowercase)")
    type: KeyType = KeyType.CONCEPT
    origin: KeyOrigin = KeyOrigin.LLM

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return _key_shorthand(value)


_KEY_SPECS: dict[Any, KeySpec] = {}
_KEY_SPECS_SIZE = 65_536


def _key_entry(value: Any) -> Any:
    """The shorthand, then the :class:`KeySpec` a key of the same plain strings already validated to.

    A suite repeats a few thousand keys hundreds of thousands of times (a
    LongMemEval S suite ~12 keys per item); building each anew was a fifth of
    ``validate``. Only a mapping of exact ``str`` values is remembered, and only
    once it validated (the model is frozen, so the instance is shared safely):
    anything else, and a key that fails, is validated as before, so its
    errors and their places are unchanged.
    """
    if value.__class__ is str:
        value = {"key": value}
    elif value.__class__ is not dict or len(value) > 3:
        return value
    for part in value.values():
        if part.__class__ is not str:
            return value
    held = _KEY_SPECS.get(found := tuple(value.items()))
    if held is not None:
        return held
    try:
        spec = KeySpec.model_validate(value)
    except ValidationError:
        return value  # validated again in place, where its errors are located
    if len(_KEY_SPECS) >= _KEY_SPECS_SIZE:
        _KEY_SPECS.clear()  # bounded: a suite of distinct keys never grows it past the size
    _KEY_SPECS[found] = spec
    return spec


KeyEntry = Annotated[KeySpec, BeforeValidator(_key_entry, json_schema_input_type=str | KeySpec)]


class SourceRef(_Model):
    """Points at the session turn a fact came from."""

    session: Identifier = Field(description="Id of a session in this scenario")
    turn: Identifier = Field(description="Id of a turn of that session (t1, t2, ... unless set)")


class Revision(_Model):
    """An earlier content of the same item, replaced by a later update.

    The item is created with its first revision and updated through the rest
    to its final ``content``, so its version counts the history.
    """

    content: str = Field(description="The content the item held until the next revision")
    at: Millis = Field(description="When this content was written; increasing, before the item's observed_at")


ItemRole = Literal["answer", "supporting", "distractor", "stale", "canary", "other"]
DISTRACTOR_ROLES: frozenset[str] = frozenset({"distractor", "stale", "canary"})


class ItemSpec(_Model):
    """A memory item seeded into the probe's store.

    ``workspace`` null makes a global item; a workspace key makes a workspace
    item. ``role`` documents why the item is there (the answer, a distractor,
    a stale value, another workspace's canary) and is never shown to the agent.
    """

    id: Identifier = Field(description="Item id in the store; relevant_items and supersedes name it")
    content: str = Field(description="Final (current) content")
    kind: Kind
    statement_type: StatementType = StatementType.FACT
    temporal_type: TemporalType = TemporalType.UNDATED
    event_started_at: Millis | None = None
    event_ended_at: Millis | None = None
    observed_at: Millis | None = Field(None, description="Defaults to the start of the first source's session")
    workspace: Identifier | None = Field(None, description="Workspace key of a workspace item; null for a global item")
    state: LifecycleState = Field(LifecycleState.ACTIVE, description="archived items are stored but never readable")
    origin: Origin = Origin.AGENT_EXTRACTED
    keys: list[KeyEntry] = Field(min_length=1, max_length=32, description="1..32 keys; a bare string is a concept key")
    sources: list[SourceRef] = Field(min_length=1, max_length=256, description="Session turns the fact came from")
    revisions: list[Revision] = Field(default_factory=list, description="Earlier contents, oldest first")
    supersedes: list[Identifier] = Field(default_factory=list, description="Items whose fact this one replaces")
    role: ItemRole = Field("other", description="Why the item is there; never shown to the agent")


class Policy(_Model):
    """Runtime memory policy of the probe run. Scenario default: agent reads on,
    so the recall arm has its tools; policy scenarios switch them off."""

    enabled: bool = True
    agent_read_enabled: bool = True


class Probe(_Model):
    """The later session the agent answers in."""

    workspace: Identifier | None = Field(None, description="Workspace key of the probe run; null for none")
    policy: Policy = Policy()
    incognito: bool = Field(False, description="Incognito run: memory tools are never offered")
    started_at: Millis = Field(description="Probe start; after every session")
    history: list[Turn] = Field(default_factory=list, description="The probe session's exact recent history")
    message: str = Field(min_length=1, description="The user's new message the agent answers")

    @field_validator("history", mode="before")
    @classmethod
    def _default_turn_ids(cls, value: Any) -> Any:
        return _number_turns(value, HISTORY_TURN_PREFIX)


class AnswerCheck(_Model):
    """Deterministic text checks; strings match case-insensitively after
    Unicode (NFKC) and whitespace folding, regexes are Python ``re`` with IGNORECASE."""

    must_contain_any: list[str] = Field(default_factory=list, description="At least one must appear")
    must_contain_all: list[str] = Field(default_factory=list, description="Every one must appear")
    must_contain_groups: list[Annotated[list[str], Field(min_length=1)]] = Field(
        default_factory=list,
        description="Every group must match, in any order; a group matches when any of its synonyms appears "
        "(list answers: [[Paris], [Rome, Roma]])",
    )
    must_match: list[str] = Field(default_factory=list, description="Every regex must match")
    must_not_contain: list[str] = Field(default_factory=list, description="None may appear")
    must_not_match: list[str] = Field(default_factory=list, description="No regex may match")


class Canary(_Model):
    """A string whose presence in an answer is an unsupported claim.

    ``leakage``: a fact planted in another workspace; ``stale``: a superseded
    value; ``invented``: a tempting detail nothing supports; ``someone_else``:
    a true fact about another person, offered as the asked-about person's (the
    adversarial trap), counted apart from ``invented``; ``forgotten``: a fact
    an earlier session of the probe's scope stated and a later one asked to
    forget (scored as ``retained_after_forget`` wherever it comes back:
    :mod:`harness.scenarios.forgetting`).
    """

    text: str = Field(min_length=1, description="Matched like must_not_contain")
    kind: Literal["leakage", "stale", "invented", "someone_else", "forgotten"]


class Expect(AnswerCheck):
    """What a good answer must and must not do.

    The top-level checks score continuity; ``adherence`` scores whether a
    stored preference or constraint shaped the output unprompted.
    """

    abstain: bool = Field(False, description="True when nothing supports an answer and the agent should say so")
    adherence: AnswerCheck | None = Field(None, description="Checks that a stored preference shaped the output")
    relevant_items: list[Identifier] = Field(
        default_factory=list, description="Items a good retrieval returns (precision/recall by id)"
    )
    canaries: list[Canary] = Field(default_factory=list)
    rubric: str | None = Field(None, description="Optional instructions for a judge model")
    f1_reference: str | None = Field(
        None,
        min_length=1,
        description="Gold answer text for an informational token-F1 score (LoCoMo's normalisation); "
        "never part of correctness or the verdict",
    )
    unlabelled: bool = Field(
        False,
        description="No gold: a probe taken from logged traffic (`recall-eval import transcripts`). It sets no "
        "check, is never scored for continuity (right or wrong) and is counted apart as unlabelled",
    )
    logged_reply: str | None = Field(
        None,
        min_length=1,
        description="The assistant's reply as the transcript logged it: a reference for a pairwise judge, "
        "never a gold answer and never shown to the agent",
    )


class Scenario(_Model):
    """One evaluation case: a one-story file, or one probe of a conversation file.

    A conversation's probes share its ``sessions`` and ``items`` lists (the
    same objects, validated once); their ids are ``<conversation>/<probe>``.
    """

    schema_: str | None = Field(None, alias="$schema", description="Editor hint; ignored")
    schema_version: Literal[1, 2] = SCENARIO_SCHEMA_VERSION
    id: ScenarioId = Field(description="Unique id; a conversation file's probes get <conversation id>/<probe id>")
    title: str = Field(min_length=1)
    category: CategoryName = Field(
        description="What the scenario mainly measures: a built-in category or one the suite declares in `categories`",
        examples=[c.value for c in Category],
    )
    categories: dict[CategoryName, str] = Field(
        default_factory=dict,
        description="Categories the suite declares (name -> one sentence), usually in a _defaults.yaml",
    )
    tags: list[str] = Field(default_factory=list, description="Free labels; `--tag` filters on them")
    description: str = Field(min_length=1, description="One sentence on what the scenario tests")
    system_prompt: str | None = Field(
        None,
        min_length=1,
        description="Replaces the base system prompt for every arm of this scenario (suites that are not one user "
        "talking to an assistant)",
    )
    protocol: Protocol | None = Field(
        None,
        description="How the suite's paper scores it (headline, recent history, category order), usually in a "
        "_defaults.yaml; none: every category in the headline, probe.history the only recent history",
    )
    retrieval_budget: RetrievalBudget | None = Field(
        None,
        description="The retrieval budget (top_k, chars) every memory system gets, usually in a _defaults.yaml; "
        "none: top_k 10, chars 4000 unless `run --retrieval-budget` says otherwise",
    )
    sessions: list[Session] = Field(default_factory=list, description="Earlier sessions, the items' provenance")
    items: list[ItemSpec] = Field(default_factory=list, description="The memory store seen by the probe")
    probe: Probe
    expect: Expect

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _protocol_names_known(self) -> Scenario:
        check_protocol_categories(self.protocol, self.categories)
        return self


def check_protocol_categories(protocol: Protocol | None, declared: dict[str, str]) -> None:
    """A protocol may name only categories the suite declares or built-in ones (a typo would empty its headline).

    Raises:
        ValueError: naming the unknown categories and the known ones.
    """
    if protocol is None:
        return
    known = set(declared) | {c.value for c in Category}
    unknown = sorted(protocol.names() - known)
    if unknown:
        raise ValueError(f"protocol names undeclared categories {unknown}; declare them under `categories` "
                         f"(declared: {', '.join(sorted(declared)) or 'none'})")


def recent_sessions(scenario: Scenario) -> list[Session]:
    """The earlier sessions (or their last turns) the protocol's ``recent_history`` shows the probe, oldest first.

    Without a protocol, or with ``kind: none``, nothing: ``probe.history`` is
    then the whole recent history, as before protocols existed. For
    ``last_turns`` the first session returned keeps only its last turns.
    """
    protocol = scenario.protocol
    if protocol is None or protocol.recent_history.kind == "none":
        return []
    count = protocol.recent_history.count or 0
    sessions = sorted(sessions_in_scope(scenario), key=lambda s: (s.started_at, s.id))
    if protocol.recent_history.kind == "last_sessions":
        return sessions[-count:]
    chosen: list[Session] = []
    left = count
    for session in reversed(sessions):
        if left <= 0:
            break
        turns = session.turns[-left:]
        chosen.append(session if len(turns) == len(session.turns) else session.model_copy(update={"turns": turns}))
        left -= len(turns)
    return chosen[::-1]


def sessions_in_scope(scenario: Scenario) -> list[Session]:
    """Earlier sessions the probe's scope may see, oldest first.

    A session counts when it ran in no workspace or in the probe's workspace;
    the ``full_history`` arm pastes exactly these.
    """
    workspace = scenario.probe.workspace
    chosen = [s for s in scenario.sessions if s.workspace is None or s.workspace == workspace]
    return sorted(chosen, key=lambda session: session.started_at)


