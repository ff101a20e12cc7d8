"""The write phase's prompt: what the agent model is shown after each earlier session, in time order.

For an arm whose write mode is ``agent``, each earlier session of the
scenario (every workspace, oldest first; ties by id) gets one small agent
run (:func:`harness.run.sample.run_write_phase`): the shared write prompt
(:data:`WRITE_SYSTEM_PROMPT`, dated at the session's start in the form the
probe states its time, :func:`~harness.memory_systems.prompts.probe_now`: ISO 8601 under the shared
instruction block, the prose under ``legacy``), the session's
transcript as one user message, and the write tools the system offers for
that session's scope. The model saves what will matter later and forgets
what the user asked to forget. The plan counts the same messages, so what it
expects and what runs cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from harness.memory_systems.prompts import probe_now, shown_time
from harness.scenarios import Scenario, Session

WRITE_MAX_TOOL_ROUNDS = 4
"""Tool rounds one session's write run may take (parallel calls in one round count once)."""

WRITE_SYSTEM_PROMPT = """\
You maintain the user's long-term memory between conversations.

Current date and time: {now}.

The conversation below has just ended. Use your memory tools to save what will matter in later \
conversations: durable preferences, facts about the user and their projects, decisions and constraints, \
each as a specific statement with its exact values (names, numbers, versions, commands, routes that \
worked), not vague advice. When the user corrected or changed something, save the new value. If the user \
asked you to forget something, forget it and do not save it. Save nothing that mattered only in this \
conversation. Memory is kept in this conversation's scope; you cannot choose another. When you are done, \
reply with one short line saying what you saved."""

TRANSCRIPT_REQUEST = "Save what from this conversation will matter later, and forget what I asked you to forget."


def write_order(scenario: Scenario) -> list[Session]:
    """Every earlier session, oldest first (ties by id): the order memory is written in."""
    return sorted(scenario.sessions, key=lambda session: (session.started_at, session.id))


def render_transcript(session: Session) -> str:
    """The session as the write prompt shows it: a header line, ``User:``/``Assistant:`` turns, an end line.

    The header dates the session as a pasted session is dated (:func:`~harness.memory_systems.prompts.shown_time`:
    the prose, and its ISO form beside it under the shared block), so the transcript and the prompt's current time
    share one ISO form."""
    where = f", workspace {session.workspace}" if session.workspace else ""
    lines = [f"[Conversation {session.id}, {shown_time(session.started_at)}{where}]"]
    lines += [f"{'User' if turn.role == 'user' else 'Assistant'}: {turn.content}" for turn in session.turns]
    lines.append(f"[End of conversation {session.id}]")
    return "\n".join(lines)


def write_messages(session: Session) -> list[dict[str, Any]]:
    """The write run's messages for ``session``."""
    return [
        {"role": "system", "content": WRITE_SYSTEM_PROMPT.format(now=probe_now(session.started_at))},
        {"role": "user", "content": f"{render_transcript(session)}\n\n{TRANSCRIPT_REQUEST}"},
    ]
