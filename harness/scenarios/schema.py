"""The scenario JSON Schema, for editors; ``recall-eval schema``.

Generated from :class:`~harness.scenarios.models.Scenario`, then adjusted for
how files are written rather than how a merged scenario looks:

- a file may leave required fields of the top level, ``probe``, ``probe.policy``,
  ``expect`` and ``expect.adherence`` to a ``_defaults.yaml`` (mappings merge
  with defaults), so those blocks list no required fields here. Blocks inside
  lists (sessions, turns, items, keys, sources, revisions, canaries) are never
  merged, so they keep theirs. ``recall-eval validate`` checks the merged
  scenario in full;
- times accept integers or ISO 8601 strings, keys a bare string (done in the models);
- an item gives ``content`` or, in schema 2, ``quote`` (the loader resolves it before the models see it).

``scenarios/scenario.schema.json`` is this output, committed; a test keeps it current.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.scenarios.conversation_models import SuiteFile
from harness.scenarios.models import SCENARIO_SCHEMA_VERSION
from harness.scenarios.quotes import QUOTE

SCHEMA_ID = f"urn:recall-eval:scenario:v{SCENARIO_SCHEMA_VERSION}"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_REF_PREFIX = "#/$defs/"


def _merged_blocks(schema: dict[str, Any]) -> set[str]:
    """Names of the definitions reachable from the root through mappings only (never through a list)."""
    defs = schema.get("$defs", {})
    found: set[str] = set()

    def direct_refs(prop: dict[str, Any]) -> list[str]:
        refs = [prop["$ref"]] if "$ref" in prop else []
        refs += [alt["$ref"] for alt in prop.get("anyOf", []) if "$ref" in alt]
        return [ref.removeprefix(_REF_PREFIX) for ref in refs]

    def visit(node: dict[str, Any]) -> None:
        for prop in node.get("properties", {}).values():
            for name in direct_refs(prop):
                if name not in found and name in defs:
                    found.add(name)
                    visit(defs[name])

    visit(schema)
    return found


def _content_or_quote(item: dict[str, Any]) -> None:
    """An item in a file gives ``content`` or (schema 2) ``quote``s its source turn (:mod:`harness.scenarios.quotes`)."""
    item["properties"][QUOTE] = {
        "type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2,
        "description": "Schema 2, instead of content: [start, end], the characters of its one source turn's text "
                       "that are its content",
    }
    item["required"] = [name for name in item["required"] if name != "content"]
    item["oneOf"] = [{"required": ["content"]}, {"required": [QUOTE]}]


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file, with meta keys first and a stable key order."""
    generated = SuiteFile.model_json_schema(by_alias=True, mode="validation")
    generated.pop("required", None)
    for name in _merged_blocks(generated):
        generated["$defs"][name].pop("required", None)
    generated["$defs"]["ProbeEntry"]["required"] = ["id"]  # probe and expect may come from the conversation
    _content_or_quote(generated["$defs"]["ItemSpec"])
    head = {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": "recall-eval scenario",
        "description": (
            "One recall-eval scenario file: one story, or a conversation whose `probes` each become a scenario. "
            "Fields that a _defaults.yaml (or the conversation) may supply are not marked required here; "
            "`recall-eval validate` checks the merged scenario. See scenarios/README.md."
        ),
    }
    body = {key: value for key, value in generated.items() if key not in ("title", "description")}
    return head | dict(sorted(body.items()))


def schema_text() -> str:
    """The schema as committed: two-space indented JSON with a final newline."""
    return json.dumps(scenario_schema(), indent=2, ensure_ascii=False) + "\n"


def cli_schema(args: argparse.Namespace) -> int:
    """``recall-eval schema [--out FILE]``: print or write the JSON Schema."""
    text = schema_text()
    if not args.out:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"{args.out}: cannot write the schema: {exc.strerror}; choose another --out", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0
