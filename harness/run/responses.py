"""What a provider's 200 response may get wrong, and what the loop makes of it.

Two classes of fault, both recorded in the call's ``provider_fault`` and neither
retried (the same request gets the same answer):

- **A malformed answer** (content a list or a number, a tool call without
  ``function``, arguments litellm cannot decode): litellm refuses the whole
  response ("Invalid response object", raised as a 500). The response is the
  model's answer all the same: :func:`raw_response` recovers the JSON litellm
  received and :func:`lenient_message` reads it as leniently as a person would
  (text parts joined, a number as its digits); a tool call that names no
  function becomes a call of the tool ``""``, which the Host answers with an
  ``unknown_tool`` error the model sees. If nothing can be recovered the
  answer is empty.
- **Implausible usage** (:func:`checked_usage`): a token count that is not a
  whole number, is negative, or is more than the request could hold. The
  rule: prompt tokens above ``10 x (characters of the request + 8 per
  message) + 8,192`` (a token is rarely shorter than a character and real
  counts are about a quarter of the characters, so this is some 40 times a
  real count: room for a provider's hidden system prompt and chat template)
  or above 1.1 x the model's context window (litellm's ``max_input_tokens``,
  when known), and
  completion tokens above ``1.25 x --max-tokens + 64`` (or the model's
  ``max_output_tokens``). Both counts are then replaced by litellm's counter
  (``usage_source`` ``counted``) and the cost is priced from them.
"""

from __future__ import annotations

import ast
import json
import math
from typing import Any

#: What litellm says when it cannot read a response it received.
_INVALID = "Invalid response object"
_MARKER = "received_args={'response_object': "


def is_malformed_response(error: BaseException) -> bool:
    """True when litellm refused a response it received (a 200 it cannot parse), not an HTTP failure."""
    return _INVALID in str(error)


def _balanced(text: str, start: int) -> str | None:
    """The Python literal (a dict) opening at ``text[start]``, up to its closing brace; None when cut off."""
    depth, quote, i = 0, "", start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        i += 1
    return None


def raw_response(error: BaseException) -> dict[str, Any] | None:
    """The response JSON litellm received, from its "Invalid response object" error; None when not recoverable."""
    text = str(error)
    at = text.find(_MARKER)
    if at < 0:
        return None
    literal = _balanced(text, at + len(_MARKER))
    if literal is None:
        return None
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str:
    """JSON of ``value`` as text (``str()`` of what JSON cannot hold, a marker when too deep)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        return f"<{type(value).__name__} nested too deeply to show>"


def _content(content: Any, faults: list[str]) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        faults.append("content is a list")
        parts = [p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None for p in content]
        texts = [p for p in parts if isinstance(p, str)]
        return "".join(texts) if texts else _text(content)
    faults.append(f"content is a {type(content).__name__}")
    return str(content) if isinstance(content, int | float | bool) else _text(content)


def _tool_call(index: int, call: Any, faults: list[str]) -> dict[str, Any]:
    if not isinstance(call, dict):
        faults.append(f"tool call {index} is a {type(call).__name__}")
        return {"id": "", "type": "function", "function": {"name": "", "arguments": _text(call)}}
    function = call.get("function")
    if not isinstance(function, dict):
        faults.append(f"tool call {index} has no function")
        function = {}
    name, arguments = function.get("name"), function.get("arguments")
    if name is not None and not isinstance(name, str):
        faults.append(f"tool call {index} name is a {type(name).__name__}")
    if arguments is not None and not isinstance(arguments, str | dict):
        faults.append(f"tool call {index} arguments are a {type(arguments).__name__}")
    call_id = call.get("id")
    return {
        "id": call_id if isinstance(call_id, str) else "",
        "type": "function",
        "function": {"name": name if isinstance(name, str) else "" if name is None else _text(name),
                     "arguments": arguments if isinstance(arguments, str) else "" if arguments is None else _text(arguments)},
    }


def lenient_message(raw: dict[str, Any] | None) -> tuple[dict[str, Any], str | None, list[str]]:
    """The assistant message, finish reason and faults of a response litellm refused (None: nothing recovered)."""
    faults: list[str] = []
    choices = raw.get("choices") if raw is not None else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    if choice is None:
        return {"role": "assistant", "content": None}, None, ["no readable choice in the response"]
    message_in = _v if isinstance(_v := choice.get("message"), dict) else {}
    message: dict[str, Any] = {"role": "assistant", "content": _content(message_in.get("content"), faults)}
    calls = message_in.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        faults.append(f"tool_calls is a {type(calls).__name__}")
        calls = [calls]
    if calls:
        message["tool_calls"] = [_tool_call(i, call, faults) for i, call in enumerate(calls)]
    finish = choice.get("finish_reason")
    return message, finish if isinstance(finish, str) else None, faults


def _whole(value: Any) -> int | None:
    """``value`` as a whole number of tokens, or None (bools, text, fractions, NaN and infinities are not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value)


def checked_usage(prompt: Any, completion: Any, *, request_chars: int, messages: int, max_tokens: int | None,
                  max_input: int | None = None, max_output: int | None = None) -> tuple[int | None, int | None, str | None]:
    """``(prompt, completion, fault)``: the reported counts when plausible, else ``(None, None, why)``.

    None counts (no usage reported) pass through; the caller counts them.

    Example:
        >>> checked_usage(-1000000, 17, request_chars=400, messages=2, max_tokens=2048)
        (None, None, 'usage prompt_tokens -1000000 is negative')
        >>> checked_usage(120, 17, request_chars=400, messages=2, max_tokens=2048)
        (120, 17, None)
    """
    if prompt is None and completion is None:
        return None, None, None
    reported = {"prompt_tokens": prompt, "completion_tokens": completion}
    prompt_cap = 10 * (request_chars + 8 * messages) + 8192
    if max_input:
        prompt_cap = min(prompt_cap, int(max_input * 1.1))
    output_cap = max_tokens if max_tokens else max_output
    caps = {"prompt_tokens": prompt_cap, "completion_tokens": int(output_cap * 1.25) + 64 if output_cap else None}
    for name, value in reported.items():
        if value is None:
            continue
        whole = _whole(value)
        if whole is None:
            return None, None, f"usage {name} {value!r} is not a whole number"
        if whole < 0:
            return None, None, f"usage {name} {whole} is negative"
        cap = caps[name]
        if cap is not None and whole > cap:
            return None, None, f"usage {name} {whole:,} is more than the request could hold (at most {cap:,})"
    return _whole(prompt), _whole(completion), None


def fault_note(records: Any) -> str | None:
    """One line on the samples of ``records`` whose provider sent malformed answers or implausible usage (None: none did).

    Example: ``note: 2 samples had a malformed model response (content is a list): read as the model's answer, not retried``.
    """
    malformed: dict[str, int] = {}
    usage: dict[str, int] = {}
    samples = {"malformed": 0, "usage": 0}
    for record in records:
        phase = getattr(record, "write_phase", None)
        faults = [c.provider_fault for c in (*record.model_calls, *(phase.model_calls if phase is not None else ())) if c.provider_fault]
        kinds = {part.split(":")[0].strip() for fault in faults for part in fault.split("; ")}
        for family, target in (("usage", usage), ("malformed", malformed)):
            mine = {k for k in kinds if k.startswith(("usage", "cost")) == (family == "usage")}
            samples[family] += 1 if mine else 0
            for kind in mine:
                target[kind] = target.get(kind, 0) + 1
    if not malformed and not usage:
        return None

    def kinds_of(found: dict[str, int]) -> str:
        top = sorted(found, key=lambda k: (-found[k], k))
        return "; ".join(top[:3]) + (" ..." if len(top) > 3 else "")

    def n(count: int) -> str:
        return f"{count} sample{'s' if count != 1 else ''}"

    parts = []
    if malformed:
        parts.append(f"{n(samples['malformed'])} had a malformed model response ({kinds_of(malformed)}): read as the model's answer, not retried")
    if usage:
        parts.append(f"{n(samples['usage'])} had implausible provider usage ({kinds_of(usage)}): counted tokens recorded and priced instead")
    return "note: " + "; ".join(parts)
