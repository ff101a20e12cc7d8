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

import datetime as _dt
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from memory_tools.model import KeyOrigin, KeyType, Kind, LifecycleState, Origin, StatementType, TemporalType

SCENARIO_SCHEMA_VERSION = 1

_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"


def _to_millis(value: Any) -> Any:
    """Accept int milliseconds, a datetime/date, or an ISO 8601 string."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            value = _dt.datetime.fromisoformat(text)
        except ValueError:
            return value  # let pydantic report the bad value
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        value = _dt.datetime(value.year, value.month, value.day)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return int(value.timestamp() * 1000)
    return value


Millis = Annotated[int, BeforeValidator(_to_millis), Field(ge=0, description="UTC milliseconds or an ISO 8601 timestamp")]
Identifier = Annotated[str, Field(min_length=1, max_length=512, pattern=_ID_PATTERN)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


class Category(StrEnum):
    """What a scenario mainly measures; reports break results down by it."""

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


class Turn(_Model):
    """One message of a session. ``id`` defaults to ``t1``, ``t2``, ... by position."""

    id: Identifier | None = None
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)


class Session(_Model):
    """An earlier conversation; the provenance of the items extracted from it."""

    id: Identifier
    workspace: Identifier | None = Field(None, description="Workspace key the session ran in; null for none")
    started_at: Millis
    turns: list[Turn] = Field(min_length=1)


class KeySpec(_Model):
    """A memory key. In YAML a bare string is shorthand for ``{key: <string>}``."""

    key: str
    type: KeyType = KeyType.CONCEPT
    origin: KeyOrigin = KeyOrigin.LLM

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"key": value} if isinstance(value, str) else value


class SourceRef(_Model):
    """Points at the session turn a fact came from."""

    session: Identifier
    turn: Identifier


class Revision(_Model):
    """An earlier content of the same item, replaced by a later update.

    The item is created with its first revision and updated through the rest
    to its final ``content``, so its version counts the history.
    """

    content: str
    at: Millis


class ItemSpec(_Model):
    """A memory item seeded into the probe's store.

    ``workspace`` null makes a global item; a workspace key makes a workspace
    item. ``role`` documents why the item is there (the answer, a distractor,
    a stale value, another workspace's canary) and is never shown to the agent.
    """

    id: Identifier
    content: str
    kind: Kind
    statement_type: StatementType = StatementType.FACT
    temporal_type: TemporalType = TemporalType.UNDATED
    event_started_at: Millis | None = None
    event_ended_at: Millis | None = None
    observed_at: Millis | None = Field(None, description="Defaults to the start of the first source's session")
    workspace: Identifier | None = None
    state: LifecycleState = LifecycleState.ACTIVE
    origin: Origin = Origin.AGENT_EXTRACTED
    keys: list[KeySpec] = Field(min_length=1, max_length=32)
    sources: list[SourceRef] = Field(min_length=1, max_length=256)
    revisions: list[Revision] = Field(default_factory=list)
    supersedes: list[Identifier] = Field(default_factory=list, description="Items whose fact this one replaces")
    role: Literal["answer", "supporting", "distractor", "stale", "canary", "other"] = "other"


class Policy(_Model):
    """Runtime memory policy of the probe run. Scenario default: agent reads on,
    so the recall arm has its tools; policy scenarios switch them off."""

    enabled: bool = True
    agent_read_enabled: bool = True


class Probe(_Model):
    """The later session the agent answers in."""

    workspace: Identifier | None = None
    policy: Policy = Policy()
    incognito: bool = False
    started_at: Millis
    history: list[Turn] = Field(default_factory=list, description="The probe session's exact recent history")
    message: str = Field(min_length=1)


class AnswerCheck(_Model):
    """Deterministic text checks; strings match case-insensitively after
    Unicode (NFKC) and whitespace folding, regexes are Python ``re`` with IGNORECASE."""

    must_contain_any: list[str] = Field(default_factory=list)
    must_contain_all: list[str] = Field(default_factory=list)
    must_match: list[str] = Field(default_factory=list)
    must_not_contain: list[str] = Field(default_factory=list)
    must_not_match: list[str] = Field(default_factory=list)


class Canary(_Model):
    """A string whose presence in an answer is an unsupported claim.

    ``leakage``: a fact planted in another workspace; ``stale``: a superseded
    value; ``invented``: a tempting detail nothing supports.
    """

    text: str = Field(min_length=1)
    kind: Literal["leakage", "stale", "invented"]


class Expect(AnswerCheck):
    """What a good answer must and must not do.

    The top-level checks score continuity; ``adherence`` scores whether a
    stored preference or constraint shaped the output unprompted.
    """

    abstain: bool = False
    adherence: AnswerCheck | None = None
    relevant_items: list[Identifier] = Field(default_factory=list)
    canaries: list[Canary] = Field(default_factory=list)
    rubric: str | None = Field(None, description="Optional instructions for a judge model")


class Scenario(_Model):
    """One evaluation case."""

    schema_: str | None = Field(None, alias="$schema", description="Editor hint; ignored")
    schema_version: Literal[1] = SCENARIO_SCHEMA_VERSION
    id: Identifier
    title: str = Field(min_length=1)
    category: Category
    tags: list[str] = Field(default_factory=list)
    description: str = Field(min_length=1, description="One sentence on what the scenario tests")
    sessions: list[Session] = Field(default_factory=list)
    items: list[ItemSpec] = Field(default_factory=list)
    probe: Probe
    expect: Expect

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
