"""The memory document's write path as a memory system: the agent appends with ``extract_memory``.

- write (mode ``agent``): after each earlier session the agent model gets
  ``extract_memory`` (:mod:`harness.memory_systems.document_write`) over the memory
  file of the session's workspace (sessions without a workspace write the
  user's global file), with the seed's switches all on: extraction enabled,
  agent reads on, not incognito. Secrets are redacted on write; entries carry
  origin ``extracted`` and the session's time.
- read (the probe): under the probe's policy gate, the workspace's file and
  the global one are parsed as the product's reader does (decay applied at the
  probe's time), their active entries ordered newest first and injected as the
  ``memory_document`` section, exactly like the oracle ``memory_document`` arm.
"""

from __future__ import annotations

from harness.memory_systems.contract import BuiltinContract
from harness.memory_systems.document import SECTION_PREAMBLE, DocumentSettings, memory_prompt_section
from harness.memory_systems.document_format import DocumentState, parse_memory_document
from harness.memory_systems.document_write import DocumentExtractRun
from harness.memory_systems.protocol import (
    MemoryInstance,
    MemorySystem,
    ProbeSetup,
    ToolRun,
    WriteMode,
    policy_denial,
    probe_messages,
)
from harness.scenarios import Scenario, Session
from memory_tools import MemoryPolicy, RunContext

WRITE_SETTINGS = DocumentSettings(enabled=True, agent_read_enabled=True, extract_tool_enabled=True)


class ExtractedDocumentInstance(MemoryInstance):
    """One memory file per workspace (None: the user's global file), kept in memory for one sample."""

    def __init__(self, scenario: Scenario) -> None:
        super().__init__(scenario)
        self._runs: dict[str | None, DocumentExtractRun] = {}

    def document(self, workspace: str | None) -> str:
        run = self._runs.get(workspace)
        return run.document if run is not None else ""

    def begin_write(self, session: Session) -> ToolRun | None:
        run = DocumentExtractRun(
            self.document(session.workspace), WRITE_SETTINGS, incognito=False, now_ms=session.started_at
        )
        self._runs[session.workspace] = run
        return run

    def begin_probe(self, policy: MemoryPolicy, context: RunContext) -> ProbeSetup:
        if policy_denial(policy, context) is not None:
            return ProbeSetup(probe_messages(self.scenario))  # cold: no file is read
        now = self.scenario.probe.started_at
        files = [context.workspace_key, None] if context.workspace_key is not None else [None]
        states = [parse_memory_document(self.document(key), now_ms=now) for key in files]
        entries = [entry for state in states if state.status == "ok" for entry in state.entries]
        entries.sort(key=lambda e: -(e.created_at or 0))  # newest first, as the section's preamble says
        section = memory_prompt_section(DocumentState("ok", tuple(entries), 0))
        return ProbeSetup(probe_messages(self.scenario, context_section=section or None))


class ExtractedDocumentSystem(BuiltinContract, MemorySystem):
    """Seed 001 V0.2: the memory file the agent writes with extract_memory, injected whole at the probe."""

    name = "memory_document_extracted"
    description = "the memory file the agent appends to with extract_memory after each session, injected whole"
    arms = {"memory_document_extracted": "agent"}
    forgetting = "none (append only)"
    ingests, discloses, shows_times, shared_times = "raw turns", "injected whole", "prose date", "iso"
    own_instructions = SECTION_PREAMBLE

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return ExtractedDocumentInstance(scenario)
