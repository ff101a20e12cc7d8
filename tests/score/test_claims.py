"""Item ids an answer cites: supported only by what a call is credited with or what the model read, never by a claim."""

from __future__ import annotations

import json

from harness.score import score_sample
from tests.score.scoring_factories import make_record, make_scenario, tool_call


def _claims(record, scenario) -> list[tuple[str, str]]:
    return [(c.kind, c.text) for c in score_sample(record, scenario).unsupported_claims]


def test_an_answer_citing_an_id_a_plug_in_reported_but_never_showed_is_unsupported() -> None:
    """Bug planted: ``cited_id_claims`` read the ids the call reported (``disclosed_item_ids``) instead of the ids it
    is credited with: an over-crediting plug-in that claims ``it-pg-version`` while showing only another item's
    text made the answer citing it look supported."""
    sc = make_scenario()
    shows_another = json.dumps({"results": [{"text": "User likes short answers"}]})  # it-global's content only
    record = make_record(sc, "Billing runs Postgres 15 (it-pg-version).", arm="over_crediting_plugin",
                         calls=[tool_call(["it-pg-version", "it-global"], shows_another)])
    assert _claims(record, sc) == [("undisclosed_item_id", "it-pg-version")]
    cites_shown = make_record(sc, "You like short answers (it-global).", arm="over_crediting_plugin",
                              calls=[tool_call(["it-pg-version", "it-global"], shows_another)])
    assert _claims(cites_shown, sc) == []  # credited: the result showed its content


def test_an_id_the_result_showed_by_its_content_supports_the_citation_without_its_id_in_the_text() -> None:
    sc = make_scenario()
    record = make_record(sc, "Billing runs Postgres 15 (it-pg-version).", arm="mem0_raw",
                         calls=[tool_call(["it-pg-version"], json.dumps({"results": [{"memory": "Billing runs Postgres 15"}]}))])
    assert _claims(record, sc) == []


def test_an_id_beyond_top_k_is_still_supported_when_the_result_names_it() -> None:
    """Credit caps recall at k; a citation is supported by what the model read, and it read the id."""
    sc = make_scenario()
    record = make_record(sc, "Billing runs Postgres 15 (it-pg-version).",
                         calls=[tool_call(["it-global", "it-pg-version"])])
    record = record.model_copy(update={"retrieval_budget": {"top_k": 1, "chars": 4000}})
    assert _claims(record, sc) == []


def test_a_cited_id_is_supported_only_by_a_whole_token_in_what_the_model_read() -> None:
    """Bug planted: the visible-text fallback was a substring test: ``it-pg-version`` was supported by a result that
    showed only ``it-pg-version-2``."""
    base = make_scenario()
    items = [i.model_copy(update={"id": "it-pg-version-2"}) if i.id == "it-global" else i for i in base.items]
    sc = base.model_copy(update={"items": items})
    record = make_record(sc, "Billing runs Postgres 15 (it-pg-version).", calls=[tool_call(["it-pg-version-2"])])
    assert _claims(record, sc) == [("undisclosed_item_id", "it-pg-version")]
