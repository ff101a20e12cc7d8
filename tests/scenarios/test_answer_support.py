"""Warnings when the answer key and ``relevant_items`` disagree, and field suggestions that keep the field's sense."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.scenarios import Problem, load_suite
from harness.scenarios.skeleton import scenario_text


def _problems(tmp_path: Path, edit: Any) -> list[Problem]:
    data = yaml.safe_load(scenario_text("s-1", Path("s-1.yaml")))
    edit(data)
    path = tmp_path / "s-1.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return load_suite([path]).problems


def _warnings(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in problems if p.severity == "warning"]


def test_a_required_text_no_relevant_item_states_is_a_warning(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["expect"]["must_contain_all"] = ["5174", "8080"]

    [(field, message)] = _warnings(_problems(tmp_path, edit))
    assert field == "expect.must_contain_all[1]"
    assert message.startswith("no relevant item states this required text (relevant_items ['it-dev-port'])")


def test_a_synonym_group_none_of_whose_synonyms_a_relevant_item_states_is_a_warning(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["expect"]["must_contain_groups"] = [["port 5174", "5174"], ["vite", "webpack"]]
        data["expect"]["must_contain_any"] = ["on port 5174", "localhost:5174"]  # one of them is enough

    [(field, message)] = _warnings(_problems(tmp_path, edit))
    assert field == "expect.must_contain_groups[1]" and message.startswith("no relevant item states any of these")


def test_no_relevant_item_named_beside_a_required_answer_is_a_warning(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["expect"]["relevant_items"] = []

    [(field, message)] = _warnings(_problems(tmp_path, edit))
    assert field == "expect.must_contain_all[0]" and "no item is named in relevant_items" in message


def test_an_answer_the_probe_message_or_the_items_words_supply_is_not_warned(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["probe"]["message"] = "I'm on ticket WEB-418: which port should the web app's dev server use?"
        # "WEB-418" comes from the question; "localhost:5174" is made of words the item holds
        data["items"][0]["content"] = "The web app's dev server runs on localhost, port 5174."
        data["expect"]["must_contain_all"] = ["5174", "web-418", "localhost:5174"]

    assert _warnings(_problems(tmp_path, edit)) == []


def test_the_only_relevant_item_being_a_distractor_is_a_warning(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["items"][0]["role"] = "stale"

    warnings = _warnings(_problems(tmp_path, edit))
    assert ("expect.relevant_items", "the only relevant item 'it-dev-port' has role stale: an answer should come from "
            "an item with role answer or supporting (is the role, or relevant_items, wrong?)") in warnings


def test_a_misspelt_must_contain_is_never_told_to_be_must_not_contain(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["expect"]["must_contain"] = data["expect"].pop("must_contain_all")

    [problem] = [p for p in _problems(tmp_path, edit) if p.severity == "error"]
    assert problem.field == "expect.must_contain" and "must_not_contain" not in problem.message
    assert "did you mean one of 'must_contain_any', 'must_contain_all', 'must_contain_groups'?" in problem.message


def test_a_misspelt_negative_field_is_still_told_its_negative_name(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["expect"]["must_not_contian"] = data["expect"].pop("must_not_contain")

    [problem] = [p for p in _problems(tmp_path, edit) if p.severity == "error"]
    assert "did you mean 'must_not_contain'?" in problem.message
