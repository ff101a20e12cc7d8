"""Logged conversations (OpenAI chat-format transcripts) -> one unlabelled probe per later session.

``recall-eval import transcripts FILE OUT`` reads a team's own traffic:

- a JSONL file, one message per line: ``{"session_id", "workspace", "user_id"
  (optional), "role", "content", "timestamp"}`` (``content`` a string or
  OpenAI's list of ``{"type": "text", "text": ...}`` parts; the time may be
  ``created_at``; ISO 8601 or epoch seconds/milliseconds); or
- a folder of ``*.json`` files, one per session: ``{"session_id", "workspace",
  "user_id", "messages": [{"role", "content", "timestamp"}, ...]}`` (a
  missing ``session_id`` is the file's name).

Sessions are grouped per user and workspace and put in time order (by their
first message). Each later session's first user message becomes a probe
without gold (``expect.unlabelled``): its earlier sessions are the group's
sessions before it (turns logged after the probe's time are cut), its recent
history the turns before it in its own session, and the assistant's logged
reply is kept as ``expect.logged_reply``, a reference for a pairwise judge and
never a gold answer. Every text is redacted first (:class:`harness.redaction.Redactor`:
the secret patterns plus ``--redact``). docs/importers.md has the rules.

Bad input, each decided (and counted in ``_suite.json``):

- not JSON, not an object, no ``session_id``, a ``role`` or time that cannot
  be read, a workspace that is not an identifier, one session claiming two
  workspaces or two users, a message of a session file naming another session: exit 2 naming ``file:line`` and
  the field;
- a message without a time: takes the time of the message before it in its
  session (repaired); a session with no time at all: dropped;
- sessions out of order in the file: sorted (repaired); messages of a session
  out of time order: sorted by time, file order kept among equals (repaired);
- a session with only assistant turns: dropped (nothing the user said);
- a message repeated (same session, role, content and time): dropped;
- system and tool messages, and messages without text: dropped;
- no workspace on any message of a session: the session ran in no workspace
  (reported), as ``Session.workspace`` null means.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.importers.faults import FaultLog, ImporterError
from harness.importers.output import safe_id
from harness.importers.times import message_millis
from harness.redaction import Redactor
from harness.scenarios import ID_PATTERN

CATEGORY = "logged"
CATEGORY_TEXT = "A later session of a logged conversation: its first user message, answered without a gold answer."
TIME_FIELDS = ("timestamp", "created_at", "time")
USER_FIELDS = ("user_id", "user")
_IDENT = re.compile(ID_PATTERN)
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class _Message:
    role: str
    content: str
    at: int | None
    where: str
    order: int


@dataclass
class _Session:
    raw_id: str
    user: str | None
    workspace: str | None
    where: str
    #: ``raw_id`` redacted: what every file, id, title, description and message shows (a token can sit in an id).
    shown_id: str = ""
    #: ``user`` redacted, as ``shown_id`` (``user`` stays the grouping key).
    shown_user: str | None = None
    messages: list[_Message] = field(default_factory=list)
    #: Where the user and workspace were first read, for the message naming a conflict.
    user_where: str = ""
    workspace_where: str = ""

    @property
    def start(self) -> int:
        return min(m.at for m in self.messages if m.at is not None)


@dataclass
class TranscriptStats:
    """What an import of transcripts read and wrote (the figures it prints)."""

    messages: int = 0
    sessions: int = 0
    groups: int = 0
    probes: int = 0
    redactions: int = 0


def _iso(millis: int) -> str:
    """``2026-03-02T10:00:00.123Z``: milliseconds kept (messages of one second stay ordered)."""
    moment = _dt.datetime.fromtimestamp(millis / 1000, tz=_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of OpenAI's content list; None when it holds none."""
    if isinstance(content, str):
        return content.strip() or None
    if isinstance(content, list):
        parts = [text for p in content if isinstance(p, dict) and isinstance(text := p.get("text"), str)]
        joined = "\n".join(p for p in parts if p.strip()).strip()
        return joined or None
    return None


def _first(obj: dict[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in names:
        if obj.get(name) is not None:
            return name, obj[name]
    return None, None


def _ident(raw: Any, where: str, name: str) -> str | None:
    """A workspace or user key as given, which must be an identifier (it is the Host's scope key).

    Raises:
        ImporterError: it is not a string or not an identifier.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, (str, int)) or isinstance(raw, bool) or not _IDENT.match(str(raw)):
        raise ImporterError(f"{where}: field {name!r} {raw!r} is not an identifier (letters, digits and ._:-, "
                            "starting with a letter or digit): it is the memory store's scope key, so it is not "
                            "renamed; map it in the file")
    return str(raw)


class _Reader:
    """Collects sessions from messages, deciding every fault as the module docstring says."""

    def __init__(self, faults: FaultLog, redactor: Redactor, stats: TranscriptStats) -> None:
        self.faults, self.redactor, self.stats = faults, redactor, stats
        self.sessions: dict[str, _Session] = {}
        self.order = 0

    def add(self, obj: Any, where: str, defaults: dict[str, Any] | None = None) -> None:
        if not isinstance(obj, dict):
            raise ImporterError(f"{where}: a message must be a JSON object, not {type(obj).__name__}")
        defaults = defaults or {}
        message = _v if isinstance(_v := obj.get("message"), dict) else obj
        sid = obj.get("session_id")
        if sid is None or (isinstance(sid, str) and not sid.strip()) or not isinstance(sid, (str, int)):
            raise ImporterError(f"{where}: field 'session_id' is missing; every message names its session")
        sid = str(sid)
        role = message.get("role")
        if role not in ("user", "assistant", "system", "tool", "function", "developer"):
            raise ImporterError(f"{where}: field 'role' {role!r} is not user, assistant, system or tool")
        self.stats.messages += 1
        workspace = _ident(obj.get("workspace", defaults.get("workspace")), where, "workspace")
        user_name, user_raw = _first(obj, USER_FIELDS)
        if user_raw is None:
            user_name, user_raw = _first(defaults, USER_FIELDS)
        user = _ident(user_raw, where, user_name or "user_id")
        session = self.sessions.get(sid)
        if session is None:
            session = self.sessions[sid] = _Session(sid, user, workspace, where, self.shown(sid),
                                                    user and self.shown(user), user_where=where, workspace_where=where)
        self._merge_scope(session, "workspace", workspace, where)
        self._merge_scope(session, "user", user, where)
        if role != "user" and role != "assistant":
            self.faults.drop(f"{role} message (not a user or assistant turn)", where)
            return
        text = _text(message.get("content"))
        if text is None:
            self.faults.drop("message without text (tool calls or empty content)", where)
            return
        if _SURROGATE.search(text):  # valid JSON (a \ud800 escape), yet no character: nothing can write it as UTF-8
            text = _SURROGATE.sub("\ufffd", text)
            self.faults.repair("lone surrogate (a \\ud800-style escape) in a message, written as U+FFFD", where)
        text = self.shown(text)
        time_name, raw_time = _first(message, TIME_FIELDS)
        if raw_time is None and message is not obj:
            time_name, raw_time = _first(obj, TIME_FIELDS)
        at = None if raw_time is None else message_millis(raw_time, where, time_name or "timestamp")
        self.order += 1
        session.messages.append(_Message(role, text, at, where, self.order))

    def shown(self, text: str) -> str:
        """``text`` redacted, counted; a session id, a user key or a file name, as any message text."""
        text, hits = self.redactor.redact(text)
        self.stats.redactions += hits
        return text

    def _merge_scope(self, session: _Session, name: str, value: str | None, where: str) -> None:
        known = getattr(session, name)
        if value is None:
            return
        if known is None:
            setattr(session, name, value)
            setattr(session, f"{name}_where", where)
            if name == "user":
                session.shown_user = self.shown(value)
        elif known != value:
            raise ImporterError(f"{where}: field {name if name == 'workspace' else 'user_id'!r} {self.shown(value)!r} "
                                f"differs from {self.shown(known)!r} at {getattr(session, f'{name}_where')} for session "
                                f"{session.shown_id!r}; one session runs in one workspace for one user")


def _json(data: bytes, where: str, shape: str) -> Any:
    """``data`` parsed as JSON, every way it can fail one :class:`ImporterError` naming ``where``.

    Invalid UTF-8 (a raw surrogate ``ED A0 80`` included) names the byte; nesting past Python's limit is refused.
    """
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ImporterError(f"{where}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}: "
                            f"{exc.reason}); save the log as UTF-8") from None
    except RecursionError:
        raise ImporterError(f"{where}: JSON nested deeper than Python reads; {shape}") from None
    except ValueError as exc:
        raise ImporterError(f"{where}: not a JSON object ({exc}); {shape}") from None


def _read_jsonl(path: Path, reader: _Reader) -> None:
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ImporterError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path.name}:{number}"
            reader.add(_json(line, where, "one message per line"), where)


def _read_folder(path: Path, reader: _Reader) -> None:
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".json")
    if not files:
        raise ImporterError(f"{path}: no *.json file in the folder; give one JSON file per session, or a JSONL file")
    seen: dict[str, str] = {}
    for file in files:
        name = reader.shown(file.name)  # a session file is often named after its session id
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise ImporterError(f"{reader.shown(str(file))}: cannot read: {exc.strerror or exc}") from None
        data = _json(raw, reader.shown(str(file)), "one JSON object per session file")
        if isinstance(data, list):
            data = {"messages": data}
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            raise ImporterError(f"{name}: field 'messages' is missing; a session file is "
                                '{"session_id": ..., "workspace": ..., "messages": [...]}')
        sid = str(data.get("session_id") or file.stem)
        if sid in seen:
            raise ImporterError(f"{name}: session_id {reader.shown(sid)!r} is also the session of {seen[sid]}; "
                                "one file per session")
        seen[sid] = name
        defaults = {k: data.get(k) for k in ("workspace", *USER_FIELDS)}
        for index, message in enumerate(data["messages"]):
            where = f"{name}:messages[{index}]"
            if isinstance(message, dict):
                own = message.get("session_id")
                if own is not None and str(own) != sid:  # a message of another session would be moved into it
                    raise ImporterError(f"{where}: field 'session_id' {reader.shown(str(own))!r} differs from the "
                                        f"file's session {reader.shown(sid)!r}; one file per session")
                message = {**message, "session_id": sid}
            reader.add(message, where, defaults)


def _clean(session: _Session, faults: FaultLog) -> _Session | None:
    """The session with its duplicates dropped, times filled and messages in time order; None when dropped."""
    name = f"session {session.shown_id!r} ({session.where})"
    seen: set[tuple[str, str, int | None]] = set()
    kept: list[_Message] = []
    for message in session.messages:
        key = (message.role, message.content, message.at)
        if key in seen:
            faults.drop("repeated message (same session, role, text and time)", message.where)
            continue
        seen.add(key)
        kept.append(message)
    if not any(m.at is not None for m in kept):
        if kept:
            faults.drop("session without any message time (cannot be placed in time)", name)
        return None
    previous: int | None = None
    for message in kept:
        if message.at is None:
            if previous is None:  # before the first timed message: the first time there is
                previous = next(m.at for m in kept if m.at is not None)
            message.at = previous
            faults.repair("message without a time, given the time of the message before it", message.where)
        previous = message.at
    ordered = sorted(kept, key=lambda m: (m.at, m.order))
    if ordered != kept:
        faults.repair("messages of a session out of time order, sorted by time", name)
    if not any(m.role == "user" for m in ordered):
        faults.drop("session with only assistant turns (nothing the user said)", name)
        return None
    if session.workspace is None:
        faults.report("session without a workspace, imported as running in none (global scope only)", name)
    session.messages = ordered
    return session


def _session_ids(sessions: list[_Session]) -> dict[str, str]:
    """Each raw session id as a distinct identifier."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for n, session in enumerate(sessions, start=1):
        sid = safe_id(session.shown_id, f"s{n}")
        while sid in used:
            sid = f"{sid}-{n}"
        used.add(sid)
        out[session.raw_id] = sid
    return out


def _turns(messages: list[_Message], before: int | None = None) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.content} for m in messages if before is None or (m.at is not None and m.at < before)]


def _scenarios(groups: dict[tuple[str | None, str | None], list[_Session]], faults: FaultLog,
               stats: TranscriptStats) -> Iterator[dict[str, Any]]:
    taken: set[str] = set()
    for (_, workspace), sessions in sorted(groups.items(), key=lambda kv: (kv[0][0] or "", kv[0][1] or "")):
        user = sessions[0].shown_user
        ids = _session_ids(sessions)
        for k in range(1, len(sessions)):
            session = sessions[k]
            first = next(i for i, m in enumerate(session.messages) if m.role == "user")
            question = session.messages[first]
            probe_at = question.at
            assert probe_at is not None  # every kept message has a time: the reader fills a missing one from its neighbour
            earlier = []
            for previous in sessions[:k]:
                turns = _turns(previous.messages, before=probe_at)
                if previous.start >= probe_at:
                    faults.drop("earlier session starting with the later one, left out of its probe",
                                f"session {previous.shown_id!r} before {session.shown_id!r}")
                    continue
                if len(turns) < len(previous.messages):
                    faults.repair("earlier session still running at the probe, cut at the probe's time",
                                  f"session {previous.shown_id!r} at {session.shown_id!r}")
                earlier.append({"id": ids[previous.raw_id], "workspace": workspace, "started_at": _iso(previous.start),
                                "turns": turns})
            if not earlier:
                continue
            reply = next((m.content for m in session.messages[first + 1:] if m.role == "assistant"), None)
            cid = safe_id(".".join(p for p in (user, workspace, session.shown_id) if p), f"probe-{stats.probes + 1}")
            while cid in taken:
                cid = f"{cid}-{k}"
            taken.add(cid)
            expect: dict[str, Any] = {"unlabelled": True}
            if reply is not None:
                expect["logged_reply"] = reply
            stats.probes += 1
            yield {
                "schema_version": 1,
                "id": cid,
                "title": f"Logged session {session.shown_id}" + (f" in {workspace}" if workspace else ""),
                "category": CATEGORY,
                "tags": ["transcripts", *([f"workspace:{workspace}"] if workspace else []),
                         *([f"user:{user}"] if user else [])],
                "description": f"The first user message of session {session.shown_id} after {len(earlier)} earlier "
                               "session(s) of the same user and workspace; logged traffic, no gold answer.",
                "sessions": earlier,
                "items": [],
                "probe": {"workspace": workspace, "started_at": _iso(probe_at),
                          "history": _turns(session.messages[:first]), "message": question.content},
                "expect": expect,
            }


def read_transcripts(source: Path, faults: FaultLog, redactor: Redactor,
                     stats: TranscriptStats) -> Iterator[dict[str, Any]]:
    """The scenario files' data of ``source`` (a JSONL file or a folder of session files), one per probe.

    Raises:
        ImporterError: the input breaks a rule that exits (module docstring); the message names file, line and field.
    """
    reader = _Reader(faults, redactor, stats)
    if source.is_dir():
        _read_folder(source, reader)
    elif source.is_file():
        _read_jsonl(source, reader)
    else:
        raise ImporterError(f"{source}: not a file or folder (missing, or a pipe or device); give a JSONL file of "
                            "messages or a folder of session files")
    kept = [s for s in (_clean(s, faults) for s in reader.sessions.values()) if s is not None]
    stats.sessions = len(kept)
    groups: dict[tuple[str | None, str | None], list[_Session]] = {}
    for session in kept:
        groups.setdefault((session.user, session.workspace), []).append(session)
    for key, sessions in groups.items():
        in_file = list(sessions)
        sessions.sort(key=lambda s: (s.start, s.raw_id))
        if sessions != in_file:
            faults.repair("sessions out of time order in the input, sorted by their first message",
                          f"user {sessions[0].shown_user!r} workspace {key[1]!r}")
    stats.groups = len(groups)
    yield from _scenarios(groups, faults, stats)


def defaults() -> dict[str, Any]:
    """The suite's ``_defaults.yaml``: the one declared category."""
    return {"categories": {CATEGORY: CATEGORY_TEXT}}
