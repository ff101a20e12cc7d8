"""An MCP result under the run's budget, and its attribution to the sample's stored units (scope checks read it)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from harness.memory_systems.mcp.results import CUT_MARK, Unit, attribute, fit_result, result_text

UNITS = [Unit(("it-web",), "The website's CMS Postgres is on localhost:55432."),
         Unit(("it-pay",), "Payments runs ledger-db on localhost:5433."),
         Unit(("it-a", "it-b"), "Two items cite this turn.")]


def graph(*observations: str) -> str:
    return json.dumps({"entities": [{"name": f"n{i}", "entityType": "note", "observations": [o]}
                                    for i, o in enumerate(observations)], "relations": []}, indent=2)


def test_a_json_result_keeps_whole_entries_within_the_budget_in_the_products_order() -> None:
    text = graph("a" * 30, "b" * 30, "c" * 30)
    shown, cut = fit_result(text, top_k=10, chars=80)  # each entry "n0 note aaa…" is 38 characters
    assert cut and [e["observations"][0][0] for e in json.loads(shown)["entities"]] == ["a", "b"]
    shown, cut = fit_result(text, top_k=1, chars=4000)
    assert cut and len(json.loads(shown)["entities"]) == 1
    assert fit_result(text, top_k=3, chars=4000) == (text, False)  # within budget: the product's text, untouched


def test_the_budget_counts_memory_text_not_keys_or_names() -> None:
    text = graph("x" * 40)  # the JSON is over 100 characters; its memory text "n0 note xxx…" is 48
    assert fit_result(text, top_k=10, chars=48) == (text, False)
    assert json.loads(fit_result(text, top_k=10, chars=47)[0])["entities"] == []


def test_prose_past_the_budget_is_cut_and_marked() -> None:
    shown, cut = fit_result("word " * 100, top_k=10, chars=50)
    assert cut and shown.endswith(CUT_MARK) and len(shown) == 50 + len(CUT_MARK)


def test_units_shown_are_disclosed_in_order_of_appearance_through_json_escapes_case_and_spacing() -> None:
    shown = json.dumps({"notes": [{"text": "payments RUNS ledger-db   on localhost:5433."},
                                  {"text": "The website\u2019s CMS Postgres is on localhost:55432."},
                                  {"text": "The website's CMS Postgres is on localhost:55432."}]}, ensure_ascii=True)
    assert attribute(shown, UNITS, top_k=10) == ("it-pay", "it-web")


def test_a_turn_citing_several_items_credits_them_in_turn_up_to_top_k() -> None:
    assert attribute("Two items cite this turn. Payments runs ledger-db on localhost:5433.", UNITS, top_k=2) == ("it-a", "it-b")
    assert attribute("nothing stored here", UNITS, top_k=10) == ()


def test_the_model_sees_text_blocks_or_else_the_structured_content() -> None:
    blocks = SimpleNamespace(content=[SimpleNamespace(type="text", text="one"), SimpleNamespace(type="image", data="")],
                             structured_content=None)
    assert result_text(blocks) == "one\n[image content not shown]"
    structured = SimpleNamespace(content=[], structured_content={"notes": ["a"]})
    assert result_text(structured) == '{"notes": ["a"]}'


def test_a_label_naming_the_items_id_discloses_it_even_without_its_text() -> None:
    """A product listing another workspace's note by its title alone has shown that note (basic-memory's search)."""
    units = [Unit(("it-pay",), "Payments runs ledger-db on localhost:5433.", ("local database (it-pay)",))]
    shown = "# Search Results\n### local database (it-pay)\n- permalink: main/memories/local-database-it-pay"
    assert attribute(shown, units, top_k=10) == ("it-pay",)
