"""The JSON function specs and descriptions of the two memory tools, as the model sees them."""

from __future__ import annotations

import json
from typing import Any

from memory_tools.model import MatchMode
from memory_tools.policy import DEFAULT_SEARCH_LIMIT, GET_TOOL, MAX_SEARCH_LIMIT, MAX_SEARCH_TERMS, SEARCH_TOOL

_SEARCH_DESCRIPTION = (
    "Search the user's long-term memory: durable preferences, facts about the user and their projects, and "
    "decisions saved from earlier conversations. Items are found only through their keys: short labels such as "
    "'coffee', 'deploy target', 'preferred language', '偏好', 'parseConfig'. A term matches a key only as a whole: "
    "matching ignores case and extra spaces, but there is no fuzzy, synonym or substring matching. "
    "match 'exact' (the default) needs the key to equal the term; match 'prefix' needs the key to start with the "
    "term ('deploy' finds 'deploy target'). Chinese and Japanese text is not split into words, so use short whole "
    "words, typically two characters ('咖啡', '偏好'), each as its own term. Send several candidate terms in one "
    "call (synonyms, singular and plural, English and the user's language, code identifiers as written); items "
    "matching more terms rank first. Returns at most `limit` items (default {default}, at most {maximum}), "
    "each with itemId, content, kind, statementType, temporalType, event and observation times (UTC milliseconds), the keys that "
    "matched (matchedKeys) and sourceCount. When truncated is true, omittedCount results did not fit the size "
    "budget: search with narrower terms or a smaller limit. No results means nothing is stored under those keys; "
    "do not invent an answer from it."
)


def limits_text(text: str, max_limit: int) -> str:
    """A description template with the run's default and ceiling of ``limit`` filled in."""
    return text.replace("{default}", str(min(DEFAULT_SEARCH_LIMIT, max_limit))).replace("{maximum}", str(max_limit))


SEARCH_DESCRIPTION = limits_text(_SEARCH_DESCRIPTION, MAX_SEARCH_LIMIT)
GET_DESCRIPTION = (
    "Read one long-term memory item by the itemId a memory_search result gave: its current content, version, "
    "kind, statement and temporal type with event times (UTC milliseconds), all its keys, lifecycle state and "
    "the identities of the conversation events it was taken from. Returns a not_found error when the item does "
    "not exist or is not available in this conversation."
)
_LIMIT_DESCRIPTION = "Most results to return; default {default}, values above {maximum} are reduced to {maximum}."
TOOL_SPECS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": SEARCH_TOOL,
            "description": SEARCH_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "terms": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1, "maxLength": 256},
                        "minItems": 1,
                        "maxItems": MAX_SEARCH_TERMS,
                        "description": "1 to 32 key terms; an item matches when one of its keys matches any term.",
                    },
                    "match": {
                        "type": "string",
                        "enum": [MatchMode.EXACT.value, MatchMode.PREFIX.value],
                        "description": "'exact' (default): key equals a term; 'prefix': key starts with a term.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": _LIMIT_DESCRIPTION.format(default=DEFAULT_SEARCH_LIMIT, maximum=MAX_SEARCH_LIMIT),
                    },
                },
                "required": ["terms"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": GET_TOOL,
            "description": GET_DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "itemId": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 512,
                        "description": "The itemId exactly as memory_search returned it.",
                    }
                },
                "required": ["itemId"],
                "additionalProperties": False,
            },
        },
    },
)

TOOL_SPECS_JSON = json.dumps(list(TOOL_SPECS), ensure_ascii=False)
"""Frozen text of the specs: each admitted run hands out fresh copies of exactly this."""


def tool_specs_json(max_limit: int = MAX_SEARCH_LIMIT, search_description: str | None = None) -> str:
    """The specs' text for a run whose retrieval budget caps ``limit`` at ``max_limit``.

    At the default ceiling it is exactly :data:`TOOL_SPECS_JSON`, so runs at the default budget offer the
    very same tools (and hit the same cache entries) as before budgets existed.

    Args:
        max_limit: the run's top-k: ``limit``'s ceiling (its default is 5, or ``max_limit`` when smaller).
        search_description: another ``memory_search`` description template (``{default}``/``{maximum}``
            are filled in), e.g. the full-text layer's.
    """
    if max_limit == MAX_SEARCH_LIMIT and search_description is None:
        return TOOL_SPECS_JSON
    specs = json.loads(TOOL_SPECS_JSON)
    search = specs[0]["function"]
    search["description"] = limits_text(search_description or _SEARCH_DESCRIPTION, max_limit)
    search["parameters"]["properties"]["limit"]["description"] = _LIMIT_DESCRIPTION.format(
        default=min(DEFAULT_SEARCH_LIMIT, max_limit), maximum=max_limit)
    return json.dumps(specs, ensure_ascii=False)
