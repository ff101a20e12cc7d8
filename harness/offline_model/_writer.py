"""The offline agent's write phase: save what a finished conversation said, from the request alone.

Used when the request offers a tool that saves memory (its name or
description says save, remember, store, write, extract or note, and it takes
a text-like string) and the last user message carries a transcript
(``User: ...`` / ``Assistant: ...`` lines up to an ``[End of conversation``
line, as the harness's write prompt shows one). Like the answering policy it reads only the messages and the
tool specs: never the scenario or its expectations.

In the first round it makes one parallel batch of calls:

- every statement the user made (a sentence that is not a question, a
  greeting or thanks, with at least two content words) becomes a save call:
  the text is the sentence as said, the name or title is its first two
  salient words ("My home address is 12 Elm Street" -> ``home address``),
  key or tag arrays get its search terms; a later statement with the same
  title replaces an earlier one (corrections win);
- a sentence asking to forget ("forget my home address") becomes a forget
  call (a tool whose name or description says forget, delete or remove)
  with the title made the same way, and cancels a save of that title.

Arguments fit the offered schema: only declared properties, enums filled
with a value the sentence or the transcript names (a ``project`` or
``workspace`` scope when the conversation ran in a workspace) or the first.
A save tool with a required property it cannot fill is not called. After the
batch it answers with one line counting the calls. What it cannot do: judge
what matters (it saves every statement), resolve pronouns, or save what the
assistant concluded.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from harness.offline_model._terms import analyze_question

MAX_SAVES = 12
_TURN = re.compile(r"^(User|Assistant): ?(.*)$")
_HEADER = re.compile(r"^\[Conversation [^\]]*?(?:, workspace (?P<workspace>[^\]]+))?\]$")
_SENTENCES = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|(?<=[\u3002\uff01\uff1f])|\n+")
_SAVE_WORDS = ("save", "remember", "store", "write", "extract", "note", "memorize", "add")
_FORGET_WORDS = ("forget", "delete", "remove", "erase")
_FORGET_REQUEST = re.compile(r"\b(forget|delete|erase|remove)\b|\bdon'?t (remember|keep|save)\b", re.IGNORECASE)
_TITLE_FIELDS = ("name", "title", "key", "topic", "subject", "label")
_TEXT_FIELDS = ("text", "content", "memory", "note", "fact", "value", "body", "entry", "description")
_LIST_FIELDS = ("keys", "tags", "terms", "keywords", "labels")
_NOT_TOPICS = frozenset({"forget", "remember", "delete", "remove", "erase", "note", "save", "keep", "please", "also", "actually"})
_SMALL_TALK = re.compile(r"^(hi|hello|hey|thanks|thank you|ok|okay|great|cool|morning|good (morning|evening))\b", re.IGNORECASE)


def _function(tool: Any) -> tuple[str, str, dict[str, Any]]:
    function = tool.get("function", tool) if isinstance(tool, dict) else {}
    params = function.get("parameters") if isinstance(function, dict) else None
    return str(function.get("name", "")), str(function.get("description", "")), params if isinstance(params, dict) else {}


@functools.lru_cache(maxsize=1024)
def _says(name: str, description: str, words: tuple[str, ...]) -> bool:
    """Whether a tool's name or first sentence uses one of ``words`` (memoized: every call offers the same tools)."""
    text = f"{name} {description.split('.')[0]}".lower()
    return any(re.search(rf"(^|[^a-z]){w}", text) for w in words)


def _text_property(params: dict[str, Any]) -> str | None:
    props = _v if isinstance(_v := params.get("properties"), dict) else {}
    return next((p for p in _TEXT_FIELDS if isinstance(props.get(p), dict) and props[p].get("type", "string") == "string"), None)


def write_tools(tools: Any) -> tuple[tuple[str, dict[str, Any]] | None, tuple[str, dict[str, Any]] | None]:
    """(save tool, forget tool) among the offered tools, each as (name, parameters), or None."""
    save = forget = None
    for tool in tools if isinstance(tools, list) else []:
        name, description, params = _function(tool)
        if forget is None and _says(name, description, _FORGET_WORDS):
            forget = (name, params)
        elif save is None and _says(name, description, _SAVE_WORDS) and _text_property(params) is not None:
            save = (name, params)
    return save, forget


def _transcript(text: str) -> tuple[list[tuple[str, str]], str | None]:
    """(role, text) turns and the workspace named in the header, from a rendered transcript."""
    turns: list[tuple[str, str]] = []
    workspace = None
    for line in text.splitlines():
        if line.startswith("[End of conversation"):
            break
        header = _HEADER.match(line.strip())
        if header and not turns:
            workspace = header.group("workspace")
            continue
        turn = _TURN.match(line)
        if turn:
            turns.append((turn.group(1).lower(), turn.group(2)))
        elif turns and line.strip():
            turns[-1] = (turns[-1][0], f"{turns[-1][1]}\n{line}")
    return turns, workspace


def title_of(sentence: str) -> str | None:
    """A statement's title: its first two salient words (``My home address is 12 Elm Street`` -> ``home address``)."""
    labels = [c.label for c in analyze_question(sentence).concepts if c.salient and c.label not in _NOT_TOPICS and len(c.label) > 1]
    return " ".join(labels[:2]) if labels else None


def _arguments(params: dict[str, Any], title: str, text: str | None, sentence: str, workspace: str | None) -> dict[str, Any] | None:
    props = _v if isinstance(_v := params.get("properties"), dict) else {}
    args: dict[str, Any] = {}
    title_field = next((p for p in _TITLE_FIELDS if p in props), None)
    if title_field:
        args[title_field] = title
    text_field = _text_property(params)
    if text is not None and text_field:
        args[text_field] = text
    for name, spec in props.items():
        if name in args or not isinstance(spec, dict):
            continue
        if name in _LIST_FIELDS and spec.get("type") == "array":
            args[name] = list(analyze_question(sentence).search_terms[:8]) or [title]
        elif isinstance(spec.get("enum"), list) and spec["enum"]:
            values = [v for v in spec["enum"] if isinstance(v, str)]
            scoped = [v for v in values if v in ("project", "workspace")] if workspace else [v for v in values if v in ("user", "global")]
            named = [v for v in values if re.search(rf"\b{re.escape(v.lower())}", sentence.lower())]
            choice = (scoped or named or values or spec["enum"])[0]
            args[name] = choice
    required = _v if isinstance(_v := params.get("required"), list) else []
    return args if all(r in args for r in required) else None


def _calls_made(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")


def write_reply(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any] | None:
    """The write-phase reply, or None when the request is not a write request (the answering policy takes it)."""
    save, forget = write_tools(tools)
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    if save is None or last_user < 0:
        return None
    content = messages[last_user].get("content")
    turns, workspace = _transcript(content if isinstance(content, str) else "")
    if not turns:
        return None
    done = _calls_made(messages[last_user + 1 :])
    if done:
        return {"role": "assistant", "content": f"Done: {done} memory call(s) made."}
    saves: dict[str, tuple[str, str]] = {}
    forgets: dict[str, str] = {}
    for role, text in turns:
        if role != "user":
            continue
        for sentence in (s.strip() for s in _SENTENCES.split(text)):
            if not sentence or sentence.endswith(("?", "\uff1f")) or _SMALL_TALK.match(sentence):
                continue
            title = title_of(sentence)
            if title is None:
                continue
            if _FORGET_REQUEST.search(sentence):
                forgets[title] = sentence
                saves.pop(title, None)
            elif len(analyze_question(sentence).concepts) >= 2:
                saves.pop(title, None)  # re-insert: a correction moves to the end
                saves[title] = (sentence, sentence)
                forgets.pop(title, None)
    calls = []
    for title, (text, sentence) in list(saves.items())[-MAX_SAVES:]:
        args = _arguments(save[1], title, text, sentence, workspace)
        if args is not None:
            calls.append((save[0], args))
    if forget is not None:
        for title, sentence in forgets.items():
            args = _arguments(forget[1], title, None, sentence, workspace)
            if args is not None:
                calls.append((forget[0], args))
    if not calls:
        return {"role": "assistant", "content": "Nothing in this conversation needs saving."}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_write_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
            for i, (name, args) in enumerate(calls)
        ],
    }
