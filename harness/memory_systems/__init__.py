"""Memory systems: one protocol for every way an agent can carry memory across sessions.

Takes: a validated scenario (:mod:`harness.scenarios`) and an arm name.
Gives: for each sample, a fresh memory instance that is written (seeded with
the scenario's items, or by the agent's own write calls) and then opened for
the probe as the messages and tools the agent starts from. An arm is a memory
system plus a write mode (``none``, ``seeded``, ``agent``); see
:mod:`harness.memory_systems.protocol` for the contract and
``docs/memory-systems.md`` for writing one. Built in: no memory, the pasted
transcripts, the item store and its Host tools (``builtin``), full text
(``fts``), vectors and their fusion with full text (``vector``), the memory document (``document``, ``document_format``,
``document_write``, ``extracted_document``), named memories (``named``) and
agent-extracted items (``extracted``); the prompt every arm shares is
``prompts``. Public surface:

- the protocol: :class:`MemorySystem`, :class:`MemoryInstance`,
  :class:`ToolRun`, :class:`ProbeSetup`, :class:`ToolExecution`,
  :class:`StaticToolRun`, :class:`ModelWrite` and :class:`WriteModel` (a system that
  writes with the run's model itself), :func:`probe_messages`, :func:`policy_denial`,
  :func:`open_instance`, :func:`arm_fingerprint`,
  :data:`ENTRY_POINT_GROUP`;
- the registry: :func:`resolve_arm`, :func:`all_arms`, :func:`builtin_arms`,
  :func:`plugin_arms`, :class:`SystemArm`, :class:`MemorySystemError`;
- the vector arms' embedder: :func:`configure_embedder`, :func:`current_embedder`, :data:`VECTOR_ARMS`; the run's
  embedder as a system receives it (``open(..., embedder=)``): :class:`SampleEmbedding`, :func:`arm_embedder`;
- each arm's contract (:mod:`~harness.memory_systems.contract`): :class:`SystemContract` (what a system
  declares), :class:`ContractTerms`, :class:`EmbedderFacts`, :data:`NO_EMBEDDER`, :data:`UNDECLARED`,
  :data:`CONTRACT_FIELDS`, :func:`contract_marks`, :func:`contract_differences`, :func:`contract_field_text`;
  the memory instruction block: :data:`SHARED_MEMORY_INSTRUCTIONS`, :data:`INSTRUCTION_SETS`,
  :func:`configure_instructions`, :func:`current_instructions`, :func:`check_instructions`;
- the budget's one counting rule for every system: :func:`fit_disclosure` (memory text, not JSON);
- the prompts: :class:`ArmSetup`; the write phase's :data:`WRITE_SYSTEM_PROMPT`,
  :func:`write_messages`, :func:`render_transcript`, :func:`write_order`.
"""

from harness.memory_systems.contract import (
    CONTRACT_FIELDS,
    NO_EMBEDDER,
    UNDECLARED,
    ContractError,
    ContractTerms,
    EmbedderFacts,
    SystemContract,
    contract_differences,
    contract_marks,
    declared_contract,
)
from harness.memory_systems.contract import field_text as contract_field_text
from harness.memory_systems.fingerprint import arm_fingerprint
from harness.memory_systems.instructions import (
    DEFAULT_INSTRUCTIONS,
    INSTRUCTION_SETS,
    SHARED_MEMORY_INSTRUCTIONS,
    InstructionsError,
    check_instructions,
    configure_instructions,
    current_instructions,
)
from harness.memory_systems.planning import planned_probe, plans_without_store
from harness.memory_systems.prompts import ArmSetup
from harness.memory_systems.protocol import (
    ENTRY_POINT_GROUP,
    IDLE_LOG_PREFIX,
    WRITE_MODES,
    MemoryInstance,
    MemorySystem,
    ModelWrite,
    ProbeSetup,
    StaticToolRun,
    SystemArm,
    ToolExecution,
    ToolRun,
    WriteMode,
    WriteModel,
    arguments_text,
    decode_arguments,
    open_instance,
    policy_denial,
    probe_messages,
)
from harness.memory_systems.registry import (
    MemorySystemError,
    UnknownArmError,
    all_arms,
    builtin_arms,
    plugin_arms,
    resolve_arm,
)
from harness.memory_systems.run_embedding import (
    SampleEmbedding,
    arm_embedder,
    embedder_record,
    sample_embedding,
    sample_embedding_usage,
)
from harness.memory_systems.vector import VECTOR_ARMS, configure_embedder, current_embedder
from harness.memory_systems.write_prompt import (
    WRITE_MAX_TOOL_ROUNDS,
    WRITE_SYSTEM_PROMPT,
    render_transcript,
    write_messages,
    write_order,
)
from memory_tools import fit_disclosure

__all__ = [
    "IDLE_LOG_PREFIX",
    "ArmSetup",
    "CONTRACT_FIELDS",
    "NO_EMBEDDER",
    "UNDECLARED",
    "ContractError",
    "ContractTerms",
    "EmbedderFacts",
    "SystemContract",
    "contract_differences",
    "contract_field_text",
    "contract_marks",
    "fit_disclosure",
    "declared_contract",
    "DEFAULT_INSTRUCTIONS",
    "INSTRUCTION_SETS",
    "SHARED_MEMORY_INSTRUCTIONS",
    "InstructionsError",
    "check_instructions",
    "configure_instructions",
    "current_instructions",
    "UnknownArmError",
    "ENTRY_POINT_GROUP",
    "WRITE_MODES",
    "WRITE_MAX_TOOL_ROUNDS",
    "WRITE_SYSTEM_PROMPT",
    "MemoryInstance",
    "MemorySystem",
    "MemorySystemError",
    "ModelWrite",
    "ProbeSetup",
    "SampleEmbedding",
    "StaticToolRun",
    "SystemArm",
    "ToolExecution",
    "ToolRun",
    "WriteMode",
    "VECTOR_ARMS",
    "WriteModel",
    "all_arms",
    "configure_embedder",
    "current_embedder",
    "arguments_text",
    "arm_embedder",
    "arm_fingerprint",
    "embedder_record",
    "sample_embedding",
    "sample_embedding_usage",
    "builtin_arms",
    "decode_arguments",
    "open_instance",
    "planned_probe",
    "plans_without_store",
    "plugin_arms",
    "policy_denial",
    "probe_messages",
    "render_transcript",
    "resolve_arm",
    "write_messages",
    "write_order",
]
