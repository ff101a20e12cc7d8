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


def test_lists_of_one_result_share_one_budget_of_entries_and_characters() -> None:
    """Bug this guards: each list of a result fitted with the whole budget (a graph's entities and its relations
    each given ``top_k`` entries and ``chars`` characters), so a product returning two lists showed twice the rest's."""
    value = {"entities": [{"observations": ["a" * 30]}, {"observations": ["b" * 30]}],
             "relations": [{"from": "c" * 30}, {"from": "d" * 30}]}
    text = json.dumps(value)
    shown, cut = fit_result(text, top_k=3, chars=4000)
    assert cut and json.loads(shown) == {"entities": value["entities"], "relations": value["relations"][:1]}
    shown, cut = fit_result(text, top_k=10, chars=70)  # 60 characters to the entities, 10 left: no relation fits
    assert cut and json.loads(shown) == {"entities": value["entities"], "relations": []}
    shown, cut = fit_result(text, top_k=2, chars=4000)  # the entities use both entries: none left for a relation
    assert cut and json.loads(shown)["relations"] == []


def test_a_long_text_field_beside_the_lists_is_cut_to_the_characters_left_and_marked() -> None:
    """A field that is no list (a product's summary) counts against the budget; past it, it is cut where the budget
    ends and marked, and nothing after it has room."""
    value = {"summary": "s" * 50, "count": {"total": "two notes"}, "notes": ["n" * 10]}
    shown, cut = fit_result(json.dumps(value), top_k=10, chars=40)
    assert cut and json.loads(shown) == {"summary": "s" * 40 + CUT_MARK, "count": {"total": "two notes"}, "notes": []}
    shown, cut = fit_result(json.dumps(value), top_k=10, chars=69)  # 50 + 9 ("two notes") + 10 = 69: all fits
    assert not cut and json.loads(shown) == value
    shown, cut = fit_result(json.dumps(value), top_k=10, chars=68)  # one short: the nested field counted, the note out
    assert cut and json.loads(shown)["notes"] == []
    shown, cut = fit_result(json.dumps({"notes": ["n" * 10], "summary": "s" * 50}), top_k=10, chars=20)
    assert cut and json.loads(shown) == {"notes": ["n" * 10], "summary": "s" * 10 + CUT_MARK}
    shown, cut = fit_result(json.dumps({"summary": "s" * 40}), top_k=10, chars=40)
    assert (shown, cut) == (json.dumps({"summary": "s" * 40}), False)  # exactly the budget: not cut


def test_a_unit_is_found_in_a_products_json_only_after_its_escapes_are_decoded() -> None:
    """A product's JSON may write é as \\u00e9; the raw text would not hold the stored note's words."""
    units = [Unit(("it-cafe",), "Le café ouvre à 9 h.")]
    shown = json.dumps({"notes": ["Le café ouvre à 9 h."]}, ensure_ascii=True)
    assert "café" not in shown
    assert attribute(shown, units, top_k=10) == ("it-cafe",)


def test_units_are_ordered_by_where_each_first_appears() -> None:
    """A unit repeated at the end of a result still comes first when it also opens it."""
    units = [Unit(("it-pay",), "Payments runs ledger-db."), Unit(("it-web",), "The website runs Postgres.")]
    shown = "Payments runs ledger-db. The website runs Postgres. Again: Payments runs ledger-db."
    assert attribute(shown, units, top_k=10) == ("it-pay", "it-web")
    assert attribute(shown, units[::-1], top_k=10) == ("it-pay", "it-web")


def test_text_blocks_win_over_structured_content_and_a_result_may_lack_either_field() -> None:
    """The MCP spec has a tool that returns structured content send it as a text block too: the model reads the
    text blocks; structured content only when there is none, written without ASCII escapes."""
    both = SimpleNamespace(content=[SimpleNamespace(type="text", text="Found one note.")],
                           structured_content={"notes": ["a"]})
    assert result_text(both) == "Found one note."
    assert result_text(SimpleNamespace(content=[])) == ""
    assert result_text(SimpleNamespace(content=[], structured_content={"notes": ["Café"]})) == '{"notes": ["Café"]}'


def test_once_the_budget_is_spent_every_later_text_field_is_cut_to_nothing() -> None:
    """After a cut (or a list that took every character), nothing more is shown: not one character of the next field."""
    shown, cut = fit_result(json.dumps({"notes": ["n" * 10], "summary": "s" * 50, "flag": "y"}), top_k=10, chars=10)
    assert cut and json.loads(shown) == {"notes": ["n" * 10], "summary": CUT_MARK, "flag": CUT_MARK}
    shown, cut = fit_result(json.dumps({"summary": "s" * 50, "flag": "y", "notes": ["n"]}), top_k=10, chars=20)
    assert cut and json.loads(shown) == {"summary": "s" * 20 + CUT_MARK, "flag": CUT_MARK, "notes": []}


def test_prose_within_the_budget_or_exactly_at_it_is_shown_whole_and_not_marked_cut() -> None:
    assert fit_result("word " * 10, top_k=10, chars=50) == ("word " * 10, False)
    assert fit_result("short note", top_k=10, chars=50) == ("short note", False)


def test_a_cut_json_result_keeps_its_text_as_the_product_wrote_it_without_ascii_escapes() -> None:
    shown, cut = fit_result(json.dumps({"notes": ["Café à 9 h", "Crème brûlée"]}), top_k=1, chars=4000)
    assert cut and shown == '{"notes": ["Café à 9 h"]}'
