"""The conversation file format: its shared part and its probes, each of which becomes a scenario.

A conversation file holds sessions and items once and many questions (``probes``); each probe becomes the
scenario ``<conversation id>/<probe id>`` (:mod:`harness.scenarios.conversation` does the expansion).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from harness.scenarios.budget import RetrievalBudget
from harness.scenarios.field_types import CategoryName, Identifier
from harness.scenarios.models import (
    SCENARIO_SCHEMA_VERSION,
    Expect,
    ItemRole,
    ItemSpec,
    Probe,
    Scenario,
    Session,
    _Model,
    check_protocol_categories,
)
from harness.scenarios.protocol import Protocol


class ProbeEntry(_Model):
    """One question of a conversation file; it becomes the scenario ``<conversation id>/<id>``.

    Missing ``title``, ``description`` and ``category`` come from the
    conversation; ``tags`` are added to its tags; ``item_roles`` overrides
    ``items[].role`` for this probe only. ``probe`` and ``expect`` merge over
    the conversation's own ``probe``/``expect`` blocks (defaults for every probe).
    """

    id: Identifier = Field(description="Probe id; the scenario id is <conversation id>/<probe id>")
    title: str | None = Field(None, min_length=1, description="Defaults to '<conversation title> / <probe id>'")
    description: str | None = Field(None, min_length=1, description="Defaults to the conversation's")
    category: CategoryName | None = Field(None, description="Defaults to the conversation's")
    tags: list[str] = Field(default_factory=list, description="Added to the conversation's tags")
    item_roles: dict[Identifier, ItemRole] = Field(
        default_factory=dict, description="Per-probe overrides of items[].role, by item id"
    )
    probe: Probe
    expect: Expect


class Conversation(_Model):
    """The shared part of a conversation file (or a folder's ``_conversation.yaml``): everything but ``probes``.

    Its ``probe`` and ``expect`` blocks, when present, are defaults merged
    under every probe's own and are not fields here.
    """

    schema_: str | None = Field(None, alias="$schema", description="Editor hint; ignored")
    schema_version: Literal[1, 2] = SCENARIO_SCHEMA_VERSION
    id: Identifier = Field(description="Conversation id: the first half of its probes' scenario ids")
    title: str = Field(min_length=1)
    description: str = Field(min_length=1)
    category: CategoryName | None = Field(None, description="Default category of the probes")
    categories: dict[CategoryName, str] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    system_prompt: str | None = Field(None, min_length=1)
    protocol: Protocol | None = None
    retrieval_budget: RetrievalBudget | None = None
    sessions: list[Session] = Field(default_factory=list)
    items: list[ItemSpec] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _protocol_names_known(self) -> Conversation:
        check_protocol_categories(self.protocol, self.categories)
        return self


class SuiteFile(Scenario):
    """The shape of any scenario file, for the JSON Schema only: a scenario, or a conversation with ``probes``."""

    probes: list[ProbeEntry] = Field(
        default_factory=list,
        description="A conversation file's questions: each becomes the scenario <id>/<probe id>, sharing sessions and items",
    )
