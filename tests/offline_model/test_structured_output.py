"""The offline model honours a JSON-schema ``response_format``: a JSON value valid under the schema, filled from the messages."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from harness.offline_model import answer

CONVERSATION = [
    {"role": "system", "content": "Turn the conversation into records."},
    {"role": "user", "content": (
        "Please process this.\n"
        "user: Caroline: I went to the LGBTQ support group on 2023-05-07 and it was powerful.\n"
        "assistant: Melanie: That is great! My kids love painting pottery on weekends.\n"
        "user: Caroline: Thanks!\n"
        "user: Caroline: Do you like hiking?\n"
        "user: Caroline: I am researching adoption agencies for next year.")},
]
STATEMENTS = {"Caroline: I went to the LGBTQ support group on 2023-05-07 and it was powerful.",
              "Melanie: My kids love painting pottery on weekends.", "Caroline: I am researching adoption agencies for next year."}

EXTRACTION = {
    "type": "object",
    "properties": {"records": {"type": "array", "items": {
        "type": "object",
        "properties": {"record_id": {"type": "string"}, "fact": {"type": "string"},
                       "speaker_role": {"type": "string", "enum": ["user", "assistant"]},
                       "related": {"type": "array", "items": {"type": "string"}}},
        "required": ["record_id", "fact", "speaker_role"], "additionalProperties": False}}},
    "required": ["records"], "additionalProperties": False,
}
PYDANTIC_STYLE = {  # what pydantic's model_json_schema() gives: $defs, $ref, anyOf with null, titles
    "$defs": {"Fact": {"type": "object", "title": "Fact",
                       "properties": {"statement": {"type": "string", "minLength": 5},
                                      "speaker": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                                      "importance": {"type": "integer", "minimum": 1, "maximum": 5},
                                      "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                                      "private": {"type": "boolean"}},
                       "required": ["statement", "importance", "private"]}},
    "type": "object", "title": "Facts",
    "properties": {"facts": {"type": "array", "items": {"$ref": "#/$defs/Fact"}, "maxItems": 2},
                   "meta": {"type": "object", "properties": {"observed_on": {"type": "string", "format": "date"}},
                            "required": ["observed_on"], "additionalProperties": False}},
    "required": ["facts", "meta"],
}
ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 60},
                   "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                   "verdict": {"type": "string", "enum": ["supported", "unsupported"]},
                   "sources": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
    "required": ["answer", "confidence", "verdict", "sources"], "additionalProperties": False,
}


def _structured(schema: dict[str, Any], messages: list[dict[str, Any]] = CONVERSATION) -> Any:
    reply = answer("offline/reference", messages, None, {"type": "json_schema", "json_schema": {"name": "out", "schema": schema}})
    value = json.loads(reply.message["content"])
    jsonschema.validate(value, schema)
    return value


def test_an_extraction_schema_gets_one_element_per_statement_made_with_its_speaker_role() -> None:
    value = _structured(EXTRACTION)
    assert {m["fact"] for m in value["records"]} == STATEMENTS  # questions, thanks and the request itself are not statements
    assert [m["record_id"] for m in value["records"]] == ["0", "1", "2"]
    roles = {m["fact"].split(":")[0]: m["speaker_role"] for m in value["records"]}
    assert roles == {"Caroline": "user", "Melanie": "assistant"}


def test_a_pydantic_style_schema_with_refs_nulls_bounds_and_limits_is_met() -> None:
    value = _structured(PYDANTIC_STYLE)
    assert len(value["facts"]) == 2 and all(f["statement"] in STATEMENTS for f in value["facts"])
    assert all(1 <= f["importance"] <= 5 and f["private"] is False for f in value["facts"])
    assert value["meta"] == {"observed_on": "2023-05-07"}  # the date the messages name


def test_text_outside_any_array_is_the_models_ordinary_answer() -> None:
    question = [{"role": "user", "content": "What is my dog called?"}]
    value = _structured(ANSWER, question)
    prose = answer("offline/reference", question, None).message["content"]
    assert value["answer"] == prose[:60] and "I don't know" in value["answer"]
    assert value["sources"] and 0 <= value["confidence"] <= 1


def test_without_a_schema_the_reply_is_the_usual_prose() -> None:
    plain = answer("offline/reference", CONVERSATION, None).message
    assert answer("offline/reference", CONVERSATION, None, {"type": "json_object"}).message == plain
    assert answer("offline/reference", CONVERSATION, None, {"type": "text"}).message == plain


def test_a_request_offering_tools_still_gets_its_tool_call() -> None:
    tools = [{"type": "function", "function": {"name": "memory_search", "parameters": {
        "type": "object", "properties": {"terms": {"type": "array", "items": {"type": "string"}}}}}}]
    reply = answer("offline/reference", [{"role": "user", "content": "Which port does the dev server use?"}], tools,
                   {"type": "json_schema", "json_schema": {"schema": ANSWER}})
    assert reply.message.get("tool_calls")


@pytest.mark.parametrize("schema", [EXTRACTION, PYDANTIC_STYLE, ANSWER])
def test_litellm_and_the_in_process_call_give_the_same_structured_reply(schema: dict[str, Any]) -> None:
    from harness.offline_model import register_offline

    register_offline()
    import litellm

    response_format = {"type": "json_schema", "json_schema": {"name": "out", "schema": schema}}
    through = litellm.completion(model="offline/reference", messages=CONVERSATION, response_format=response_format)
    direct = answer("offline/reference", CONVERSATION, None, response_format)
    assert through.choices[0].message.content == direct.message["content"]


def test_nothing_to_extract_still_gives_every_required_property() -> None:
    assert _structured(EXTRACTION, [{"role": "user", "content": "user: Thanks!\nassistant: You're welcome."}]) == {"records": []}


def test_options_listed_in_the_message_are_chosen_by_overlap_with_its_question_never_unlisted_ones() -> None:
    from harness.offline_model._choices import choose_options

    text = ("Message: Which port does the dev server use?\n\nEntries:\n[e1] coffee — The usual order is a flat white.\n"
            "[e2] dev server — The dev server runs on port 5174.\n[e3] deploy — Deploys go out on Fridays.")
    assert choose_options(text, ["e1", "e2", "e3", "e4"], 2) == ["e2"]
    assert choose_options("no option lines here", ["e1"], 2) is None
    schema = {"type": "object", "required": ["selected"],
              "properties": {"selected": {"type": "array", "maxItems": 1, "items": {"type": "string", "enum": ["e1", "e2", "e3"]}}}}
    reply = answer("reference", [{"role": "user", "content": text}], None, {"type": "json_schema", "json_schema": {"schema": schema}})
    assert json.loads(reply.message["content"]) == {"selected": ["e2"]}


_OPTIONS = """Which port and host does the dev server use?
[a] deploy — Deploys go out on Fridays.
[b] dev server — The dev server runs on port 5174.
[c] dev server host — The dev server host is devbox and its port is 5174.
[d] dev server — The dev server runs on port 5174.
[b] dev server — a second line for b
  [e]   coffee flat white"""


def test_an_options_first_line_describes_it_and_every_other_line_is_the_question() -> None:
    """A repeated label keeps its first description (the repeat stays in the question); a label is at most 64 characters."""
    from harness.offline_model._choices import option_lines

    described, question = option_lines(_OPTIONS)
    assert described == {"a": "deploy — Deploys go out on Fridays.", "b": "dev server — The dev server runs on port 5174.",
                          "c": "dev server host — The dev server host is devbox and its port is 5174.",
                          "d": "dev server — The dev server runs on port 5174.", "e": "coffee flat white"}
    assert question == "Which port and host does the dev server use?\n[b] dev server — a second line for b"
    long_label = f"[{'x' * 64}] desc\n[{'y' * 65}] desc"
    assert option_lines(long_label) == ({"x" * 64: "desc"}, f"[{'y' * 65}] desc")


def test_options_come_best_match_first_ties_in_listed_order_cut_at_max_items() -> None:
    """No limit (None, or a negative maxItems) keeps every convincing option; non-string enum values are never chosen."""
    from harness.offline_model._choices import choose_options

    assert choose_options(_OPTIONS, ["a", "b", "c", "d", "e", 3], None) == ["c", "b", "d"]
    assert choose_options(_OPTIONS, ["d", "b", "c"], None) == ["c", "d", "b"]
    assert choose_options(_OPTIONS, ["a", "b", "c", "d"], 1) == ["c"]
    assert choose_options(_OPTIONS, ["b", "c", "d"], 0) == []
    assert choose_options(_OPTIONS, ["b", "c", "d"], -1) == ["c", "b", "d"]
    assert choose_options(_OPTIONS, [3, "zz"], None) is None


def test_options_are_chosen_for_the_statement_they_are_about_when_one_is_given() -> None:
    from harness.offline_model._choices import choose_options

    assert choose_options(_OPTIONS, ["a", "b", "c", "d", "e"], None, about="the coffee order is a flat white") == ["e"]


def test_an_option_is_chosen_on_one_salient_hit_of_a_short_question_but_not_on_an_unconvincing_overlap() -> None:
    """One salient word of a three-concept question (score 1, not convincing) is no case; of a one-concept question it is."""
    from harness.offline_model._choices import choose_options

    text = "Which port does the dev server use?\n[f] port forwarding rules\n[g] use it"
    assert choose_options(text, ["f", "g"], None) == []
    assert choose_options("Which port?\n[f] the port is 5174", ["f"], None) == ["f"]
