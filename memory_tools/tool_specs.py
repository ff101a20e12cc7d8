"""The JSON function specs and descriptions of the two memory tools, as the model sees them."""

from __future__ import annotations

import json
from typing import Any

from memory_tools.model import MatchMode
from memory_tools.policy import DEFAULT_SEARCH_LIMIT, GET_TOOL, MAX_SEARCH_LIMIT, MAX_SEARCH_TERMS, SEARCH_TOOL

SEARCH_DESCRIPTION = (
    "Search the user's long-term memory: durable preferences, facts about the user and their projects, and "
    "decisions saved from earlier conversations. Items are found only through their keys: short labels such as "
    "'coffee', 'deploy target', 'preferred language', '偏好', 'parseConfig'. A term matches a key only as a whole: "
    "matching ignores case and extra spaces, but there is no fuzzy, synonym or substring matching. "
    "match 'exact' (the default) needs the key to equal the term; match 'prefix' needs the key to start with the "
    "term ('deploy' finds 'deploy target'). Chinese and Japanese text is not split into words, so use short whole "
    "words, typically two characters ('咖啡', '偏好'), each as its own term. Send several candidate terms in one "
    "call (synonyms, singular and plural, English and the user's language, code identifiers as written); items "
    "matching more terms rank first. Returns at most `limit` items (default 5, at most 10), each with itemId, "
    "content, kind, statementType, temporalType, event and observation times (UTC milliseconds), the keys that "
    "matched (matchedKeys) and sourceCount. When truncated is true, omittedCount results did not fit the size "
    "budget: search with narrower terms or a smaller limit. No results means nothing is stored under those keys; "
    "do not invent an answer from it."
)
GET_DESCRIPTION = (
    "Read one long-term memory item by the itemId a memory_search result gave: its current content, version, "
    "kind, statement and temporal type with event times (UTC milliseconds), all its keys, lifecycle state and "
    "the identities of the conversation events it was taken from. Returns a not_found error when the item does "
    "not exist or is not available in this conversation."
)
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
                        "description": f"Most results to return; default {DEFAULT_SEARCH_LIMIT}, "
                        f"values above {MAX_SEARCH_LIMIT} are reduced to {MAX_SEARCH_LIMIT}.",
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
