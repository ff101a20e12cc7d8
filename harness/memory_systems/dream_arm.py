"""The ``memory_document_dream`` arm: ``memory_document_extracted`` plus Dream Mode's idle-window consolidation.

Write phase: each earlier session is extracted exactly as in
``memory_document_extracted`` (``extract_memory`` over the session's workspace
file; a session of an incognito workspace is offered no tool). Before a session,
and before the probe, that starts more than X after the previous session
(:data:`harness.memory_systems.dream.DEFAULT_IDLE_MINUTES`, the system's
``idle_minutes``), the harness asks :meth:`DreamDocumentInstance.begin_idle` for
the window's consolidation: a :class:`~harness.memory_systems.protocol.ModelWrite`
that asks the run's model once per workspace file
(:func:`~harness.memory_systems.dream.consolidation_request`) and applies the
reply through the extraction write path
(:func:`~harness.memory_systems.dream.apply_consolidation`). Its calls are
write-phase model calls of a log named ``dream@<next session or probe>``; each
append and supersession is a recorded write (``dream.append``,
``dream.supersede``), and ``dream.snapshot`` records each file's active entries
before and after the window (what ``facts lost`` is scored from).

The gates (:func:`~harness.memory_systems.dream.consolidation_denial`): no
window runs with memory, agent reads or extraction off, and an incognito
workspace is neither read nor written. The probe reads the files as
``memory_document_extracted`` does.
"""

from __future__ import annotations

import json
from typing import Any

from harness.memory_systems.document import DocumentSettings
from harness.memory_systems.document_format import parse_memory_document
from harness.memory_systems.document_write import DocumentExtractRun
from harness.memory_systems.dream import (
    DEFAULT_IDLE_MINUTES,
    Window,
    apply_consolidation,
    consolidation_denial,
    consolidation_request,
    consolidation_scopes,
    idle_windows,
    incognito_workspaces,
)
from harness.memory_systems.extracted_document import WRITE_SETTINGS, ExtractedDocumentInstance, ExtractedDocumentSystem
from harness.memory_systems.protocol import (
    MemoryInstance,
    ModelWrite,
    ToolExecution,
    ToolRun,
    WriteMode,
    WriteModel,
)
from harness.memory_systems.write_prompt import write_order
from harness.scenarios import Scenario, Session

DREAM_ARM = "memory_document_dream"


def _record(name: str, arguments: dict[str, Any], result: dict[str, Any]) -> ToolExecution:
    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    return ToolExecution(name, dumps(arguments), "ok", dumps(result), storage_read=True)


class _Consolidation(ModelWrite):
    """One idle window: each workspace file with pending sessions consolidated by one model call."""

    def __init__(self, instance: DreamDocumentInstance, window: Window) -> None:
        self.instance, self.window = instance, window

    def run(self, model: WriteModel) -> list[ToolExecution]:
        executions: list[ToolExecution] = []
        for workspace, sessions in consolidation_scopes(self.window, self.instance.scenario).items():
            run = self.instance.file_run(workspace, self.window.at_ms)
            before = [e.content for e in parse_memory_document(run.document, now_ms=self.window.at_ms).active_entries]
            messages, response_format, labels = consolidation_request(run.document, sessions, now_ms=self.window.at_ms)
            reply = model.complete(messages, response_format=response_format)
            run.document, writes = apply_consolidation(run.document, reply, labels, now_ms=self.window.at_ms,
                                                       settings=self.instance.settings)
            where = {"workspace": workspace, "window": self.window.before}
            executions += [_record(f"dream.{w.action}", where, {"event": w.event, "id": w.entry_id, "content": w.content})
                           for w in writes]
            after = [e.content for e in parse_memory_document(run.document, now_ms=self.window.at_ms).active_entries]
            executions.append(_record("dream.snapshot", {**where, "sessions": [s.id for s in sessions]},
                                      {"before": before, "after": after}))
        return executions


class DreamDocumentInstance(ExtractedDocumentInstance):
    """``memory_document_extracted``'s files, consolidated at each idle window the scenario implies."""

    def __init__(self, scenario: Scenario, settings: DocumentSettings = WRITE_SETTINGS,
                 idle_minutes: int = DEFAULT_IDLE_MINUTES) -> None:
        super().__init__(scenario)
        self.settings = settings
        self.windows = {w.before: w for w in idle_windows(write_order(scenario), scenario.probe.started_at,
                                                          idle_minutes * 60_000)}

    def file_run(self, workspace: str | None, now_ms: int) -> DocumentExtractRun:
        """The workspace's file (created empty when no session wrote it yet)."""
        if workspace not in self._runs:
            self._runs[workspace] = DocumentExtractRun("", self.settings, incognito=False, now_ms=now_ms)
        return self._runs[workspace]

    def begin_write(self, session: Session) -> ToolRun | None:
        incognito = session.workspace in incognito_workspaces(self.scenario)
        run = DocumentExtractRun(self.document(session.workspace), self.settings, incognito=incognito,
                                 now_ms=session.started_at)
        if not incognito:
            self._runs[session.workspace] = run
        return run

    def begin_idle(self, before: str) -> ModelWrite | None:
        """The consolidation of the idle window before session ``before`` (or ``probe``); None: no window there,
        a switch is off, or every pending session is an incognito workspace's."""
        window = self.windows.get(before)
        if window is None or consolidation_denial(self.settings, self.scenario) is not None:
            return None
        if not consolidation_scopes(window, self.scenario):
            return None
        return _Consolidation(self, window)


class DreamDocumentSystem(ExtractedDocumentSystem):
    """Seed 001 V0.3's Dream Mode: extraction after each session plus idle-window consolidation (opt-in)."""

    name = DREAM_ARM
    description = ("memory_document_extracted plus Dream Mode: at each idle window the run's model consolidates the "
                   "sessions since the last one (merge, supersede, summarise)")
    arms = {DREAM_ARM: "agent"}
    forgetting = "archive superseded entries"
    idle_minutes = DEFAULT_IDLE_MINUTES

    def configuration(self) -> dict[str, Any]:
        """X of "idle for X minutes": two runs under different X never compare as one arm."""
        return {"idle_minutes": self.idle_minutes}

    def open(self, scenario: Scenario, write_mode: WriteMode) -> MemoryInstance:
        return DreamDocumentInstance(scenario, WRITE_SETTINGS, self.idle_minutes)
