"""``recall-eval audit SUITE``: the checks no answer could pass, found in a suite and written by every import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.importers.audit import AuditResult, audit_conversation, audit_suite, found, normalize
from harness.importers.output import dump_yaml
from harness.score.matching import contains, normalize_text
from tests.importers.importer_fixtures import imported, locomo_sample, read_yaml, write_source


def _conversation(*probes: dict, text: str = "Yes, Ana loves watching movies with her teammates in Sweden.") -> dict:
    return {"schema_version": 1, "id": "c1", "title": "t",
            "sessions": [{"id": "s1", "started_at": "2023-05-08T10:00:00Z",
                          "turns": [{"id": "t1", "role": "user", "content": text}]}],
            "items": [{"id": "i1", "content": "Ana lives in Oslo.", "observed_at": "2023-05-08T10:00:00Z"}],
            "probes": list(probes)}


def _probe(pid: str, category: str = "single_hop", **expect: object) -> dict:
    return {"id": pid, "category": category, "probe": {"started_at": "2023-06-01T10:00:00Z", "message": "?"},
            "expect": expect}


def _kinds(data: dict) -> list[tuple[str, str]]:
    return [(f.probe, f.kind) for f in audit_conversation(data)]


def test_a_check_string_found_in_no_session_text_or_item_is_absent() -> None:
    data = _conversation(_probe("q1", must_contain_any=["Sweden"]), _probe("q2", must_contain_any=["OSLO"]),
                         _probe("q3", must_contain_groups=[["Sweden"], ["Peru", "Lima"]]),
                         _probe("q4", must_contain_any=["2"]),  # a number may be computed: never absent
                         _probe("q5", must_contain_any=["No"]))  # nor is a yes/no answer quoted
    assert _kinds(data) == [("q3", "absent")]


def test_each_must_contain_all_string_is_a_check_of_its_own_absent_when_nowhere() -> None:
    """Every string of ``must_contain_all`` must occur: one found does not excuse another that is in no text."""
    data = _conversation(_probe("q1", must_contain_all=["Sweden", "Peru"]), _probe("q2", must_contain_all=["Oslo"]))
    assert _kinds(data) == [("q1", "absent")]
    (finding,) = audit_conversation(_conversation(_probe("q1", must_contain_all=["Peru"])))
    assert finding.detail == "none of ['Peru'] occurs in the conversation"


def test_a_string_composed_of_the_conversations_words_by_punctuation_is_not_absent() -> None:
    """A URL or path an answer builds (``postgres://cms``) is passable; an unknown piece or no joiner still is absent."""
    text = "The CMS Postgres is cms-db on localhost:55432. Database name is cms."
    data = _conversation(_probe("q1", must_contain_any=["postgres://cms", "/cms"]),
                         _probe("q2", must_contain_any=["postgres://ledger"]),
                         _probe("q3", must_contain_any=["cms database"]),
                         _probe("q4", must_contain_any=["://"]), text=text)
    assert _kinds(data) == [("q2", "absent"), ("q3", "absent"), ("q4", "absent")]


def test_the_shipped_suites_have_no_gold_no_answer_could_pass(capsys: pytest.CaptureFixture[str]) -> None:
    """`recall-eval audit scenarios/starter` is an example the README shows: it exits 0."""
    for suite in ("starter", "smoke", "acceptance"):
        assert main(["audit", str(Path(__file__).resolve().parents[2] / "scenarios" / suite)]) == 0
        assert capsys.readouterr().out.startswith("gold audit: 0 findings")


def test_a_short_string_is_found_word_bounded_as_the_scorer_finds_it() -> None:
    assert _kinds(_conversation(_probe("q1", must_contain_any=["ban"]), text="Banana bread.")) == [("q1", "absent")]


def test_a_short_string_inside_cjk_text_is_found_as_the_scorer_finds_it() -> None:
    """CJK has no spaces between words: a CJK neighbour does not block "周三" in "每周三上午", for the scorer or the audit."""
    data = _conversation(_probe("q1", must_contain_any=["周三"]), _probe("q2", must_contain_any=["周五"]),
                         text="和供应商的周会改到每周三上午十点。")
    assert _kinds(data) == [("q2", "absent")]
    assert contains("每周三上午十点", "周三")


def test_the_audit_finds_a_short_string_exactly_where_the_scorer_does() -> None:
    """One boundary for both (a digit edge may not continue as a decimal or another digit, a letter edge may not touch
    a letter, a CJK neighbour never blocks): "2" is not in "2.5 kg" or "12 boxes" for the audit either."""
    texts = ("She carried 2.5 kg", "12 boxes", "the 2nd day", "python3.12", "每周三上午", "i know", "no, never",
             "1,240 steps", "Banana bread")
    needles = ("2", "5", "12", "3.12", "周三", "no", "240", "1,240", "ban", "2nd")
    assert [(t, n) for t in texts for n in needles if found(normalize(t), n) != contains(t, n)] == []
    assert not found(normalize("She carried 2.5 kg"), "2") and found(normalize("12 boxes"), "12")


def test_the_audit_normalises_as_the_scorer_does() -> None:
    for text in ("Ｓweden’s  CAFÉ", "İstanbul\tx", "ﬁne", "  Plain\tASCII \x1c text\n"):
        assert normalize(text) == normalize_text(text)


def test_glued_words_in_a_gold_are_found() -> None:
    data = _conversation(_probe("q1", must_contain_any=["watchingmovies"], f1_reference="watchingmovies"),
                         _probe("q2", must_contain_groups=[["Yesteammates"]]),
                         _probe("q3", must_contain_any=["15April 2022"]),
                         _probe("q4", must_contain_any=["sweden"], f1_reference="2nd at 3pm in Sweden"))
    found = [(f.probe, f.kind, f.detail) for f in audit_conversation(data) if f.kind == "glued"]
    assert found == [("q1", "glued", "'watchingmovies' (written apart: 'watching movies')"),
                     ("q2", "glued", "'Yesteammates' (written apart: 'Yes teammates')"),
                     ("q3", "glued", "'15April' (written apart: '15 April')")]


def test_a_list_split_inside_a_date_or_a_number_is_found() -> None:
    data = _conversation(_probe("q1", must_contain_groups=[["on 9 April"], ["2023"]]),
                         _probe("q2", must_contain_groups=[["$25"], ["000"]]),
                         _probe("q3", must_contain_groups=[["Sweden"], ["2023"]]))
    assert [(p, k) for p, k in _kinds(data) if k == "split"] == [("q1", "split"), ("q2", "split")]


def test_a_real_answer_on_an_abstention_probe_contradicts_it() -> None:
    data = _conversation(_probe("q1", "adversarial", abstain=True, must_contain_any=["Yes"]),
                         _probe("q2", "adversarial", abstain=True, canaries=[{"text": "Sweden", "kind": "someone_else"}]))
    assert ("q1", "contradiction") in _kinds(data) and not [k for p, k in _kinds(data) if p == "q2"]


def _suite(tmp_path: Path, data: dict) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "c1.yaml").write_text(dump_yaml(data), encoding="utf-8")
    return folder


def test_the_command_lists_findings_with_counts_per_category_and_exits_1(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(tmp_path, _conversation(_probe("q1", must_contain_any=["Peru"]),
                                            _probe("q2", "temporal", must_contain_groups=[["on 9 April"], ["2023"]]),
                                            _probe("q3", must_contain_any=["Sweden"])))
    assert main(["audit", str(folder)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "gold audit: 2 findings on 2 of 3 probes"
    assert "1  a check string found in no session text or item (absent): single_hop 1" in out
    assert "1  a list split inside a date or number (split): temporal 1" in out
    assert "c1/q1 [single_hop] absent: none of ['Peru'] occurs in the conversation" in out
    assert main(["audit", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["flagged"] == ["c1/q1", "c1/q2"] and report["probes"] == 3
    assert report["counts"] == {"absent": {"single_hop": 1}, "split": {"temporal": 1}}


def test_the_json_names_the_findings_list_findings_and_its_counts_so(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Bug planted: schema 1's names, ``findings`` the count and the list under ``items`` (docs said findings)."""
    folder = _suite(tmp_path, _conversation(_probe("q1", must_contain_any=["Peru"]), _probe("q2", must_contain_any=["Sweden"])))
    assert main(["audit", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["schema_version"] == 2 and "items" not in report
    assert (report["finding_count"], report["flagged_probe_count"]) == (1, 1)
    assert report["findings"] == [{"scenario": "c1/q1", "conversation": "c1", "probe": "q1", "category": "single_hop",
                                   "kind": "absent", "detail": "none of ['Peru'] occurs in the conversation"}]


def test_a_misspelled_gold_is_a_finding_of_its_own_with_the_spelling_an_answer_would_use() -> None:
    """LoCoMo conv-42/q004 ``21Janury`` and conv-43/q069 ``Januarty 5``: unpassable as written, neither glued nor
    absent-only; ``filmmaker`` (an English word, though ``film`` and ``maker`` are words of the conversation) is
    no finding. Bug planted: the misspelling check left out of the audit (the two went unlabelled)."""
    data = _conversation(_probe("q1", "temporal", must_contain_any=["21Janury, 2022"]),
                         _probe("q2", "temporal", must_contain_any=["Januarty 5"]),
                         _probe("q3", "open_domain", must_contain_any=["filmmaker"]),
                         text="Ana is a film maker; she loves watching movies in Sweden.")
    found = [(f.probe, f.kind, f.detail) for f in audit_conversation(data) if f.kind != "absent"]
    assert found == [("q1", "misspelled", "'21Janury' (unpassable as written; an answer would write '21 January')"),
                     ("q2", "misspelled", "'Januarty' (unpassable as written; an answer would write 'January')")]


def test_a_clean_suite_exits_0_and_a_missing_or_broken_one_exits_2(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(tmp_path, _conversation(_probe("q1", must_contain_any=["Sweden"])))
    assert main(["audit", str(folder)]) == 0
    assert capsys.readouterr().out.startswith("gold audit: 0 findings on 0 of 1 probes")
    assert main(["audit", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "no such file or folder" in err and len(err.strip().splitlines()) == 1
    (folder / "c1.yaml").write_text("probes: [unclosed", encoding="utf-8")
    assert main(["audit", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "c1.yaml" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_built_in_suite_can_be_audited(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    result = audit_suite([root / "scenarios"])
    assert result.probes > 0


def test_an_import_writes_the_audit_into_suite_md_and_suite_json(tmp_path: Path) -> None:
    source = write_source(tmp_path, "locomo10.json", [locomo_sample([
        {"question": "What does Ben love?", "answer": "watchingmovies", "evidence": ["D1:2"], "category": 4},
        {"question": "Where?", "answer": "Sweden", "evidence": ["D1:1"], "category": 4},
    ])])
    out, lines = imported("locomo", tmp_path, source)
    record = json.loads((out / "_suite.json").read_text())
    assert record["audit"]["flagged"] == ["conv-9/q001"] and record["audit"]["counts"]["glued"] == {"single_hop": 1}
    text = (out / "SUITE.md").read_text()
    assert "## Gold audit" in text and "conv-9/q001 [single_hop] glued: 'watchingmovies'" in text
    assert "gold audit: 2 findings on 1 of 2 probes" in lines
    assert main(["audit", str(out), "--json"]) == 1  # the command finds what the import wrote
    assert read_yaml(out / "conv-9.yaml")["probes"][1]["expect"]["must_contain_any"] == ["Sweden"]


def test_the_probe_message_and_recent_history_count_as_conversation_text() -> None:
    asked = _probe("q1", must_contain_any=["Jonas Brandt"])
    asked["probe"]["history"] = [{"role": "user", "content": "Our new student Jonas Brandt joins Monday."}]
    quoted = _probe("q2", must_contain_any=["CSV"])
    quoted["probe"]["message"] = "Write the changelog: we added CSV export."
    assert _kinds(_conversation(asked, quoted, _probe("q3", must_contain_any=["CSV"]))) == [("q3", "absent")]


def test_the_report_reads_the_flagged_ids_of_every_imported_suite_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    """A suite folder or a file in it; a hand-written suite, a broken or odd ``_suite.json`` count as no audit."""
    from harness.importers.audit import flagged_in_suites

    def suite(name: str, record: str | None) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "c1.yaml").write_text("probes: []\n", encoding="utf-8")
        if record is not None:
            (folder / "_suite.json").write_text(record, encoding="utf-8")
        return folder

    locomo = suite("locomo", json.dumps({"audit": {"flagged": ["conv-26/q017", 7]}}))
    lme = suite("lme", json.dumps({"audit": {"flagged": ["lme-3"]}}))
    unaudited = [suite("hand", None), suite("broken", "{not json"), suite("list", "[1]"),
                 suite("odd", json.dumps({"audit": {"flagged": "conv-26/q001"}})), suite("none", "{}")]
    assert flagged_in_suites([*unaudited, locomo, lme / "c1.yaml"]) == {"conv-26/q017", "7", "lme-3"}
    assert flagged_in_suites(unaudited) is None
    assert flagged_in_suites([suite("empty", json.dumps({"audit": {"flagged": []}}))]) == set()


def _audited(*conversations: dict) -> AuditResult:
    result = AuditResult()
    for data in conversations:
        result.add(data)
    return result


def test_an_audit_of_several_conversations_counts_every_probe_and_finding_by_category() -> None:
    """The import merges one audit per conversation: nothing of an earlier conversation may be lost."""
    first = _audited(_conversation(_probe("q1", must_contain_any=["Peru"]), _probe("q2", "temporal",
                                                                                    must_contain_any=["Sweden"])))
    untitled = {**_conversation(_probe("q3", must_contain_any=["Chile"])), "id": "c2", "category": "multi_hop"}
    del untitled["probes"][0]["category"]
    bare = {**_conversation(_probe("q4", must_contain_any=["Quito"])), "id": "c3"}
    del bare["probes"][0]["category"], bare["probes"][0]["id"]
    scenario = {"id": "s1", "category": "preference", "sessions": [], "expect": {"must_contain_any": ["Lima"]}}
    second = _audited(untitled, bare, scenario)
    first.merge(second)
    assert first.probes == 5 and second.probes == 3
    assert dict(first.probes_by_category) == {"single_hop": 1, "temporal": 1, "multi_hop": 1, "": 1, "preference": 1}
    assert [f.scenario for f in first.findings] == ["c1/q1", "c2/q3", "c3", "s1"]
    assert [f.category for f in first.findings] == ["single_hop", "multi_hop", "", "preference"]


def test_the_counts_and_flagged_probes_are_per_category_each_probe_flagged_once() -> None:
    data = _conversation(_probe("q1", must_contain_any=["Peru"], must_contain_all=["Chile"]),
                         _probe("q2", must_contain_any=["Lima"]), _probe("q3", "temporal", must_contain_any=["Quito"]))
    report = _audited(data).as_json()
    assert report["counts"] == {"absent": {"single_hop": 3, "temporal": 1}}
    assert report["flagged_by_category"] == {"single_hop": 2, "temporal": 1}
    assert (report["finding_count"], report["flagged_probe_count"]) == (4, 3)


def test_the_audit_lines_list_the_findings_up_to_a_limit_and_say_where_the_rest_are() -> None:
    data = _conversation(_probe("q1", must_contain_any=["Peru"]), _probe("q2", "", must_contain_any=["Lima"]))
    result = _audited(data)
    head = ["gold audit: 2 findings on 2 of 2 probes",
            "       2  a check string found in no session text or item (absent): uncategorised 1, single_hop 1"]
    listed = ["  c1/q1 [single_hop] absent: none of ['Peru'] occurs in the conversation",
              "  c1/q2 [] absent: none of ['Lima'] occurs in the conversation"]
    assert result.lines() == result.lines(limit=2) == head + listed
    assert result.lines(limit=1) == [*head, listed[0],
                                     "  ... and 1 more (`recall-eval audit` on the suite lists all)"]
    assert result.lines(limit=0) == [*head, "  (SUITE.md lists them; so does `recall-eval audit` on the suite)"]
    assert _audited(_conversation(_probe("q1", must_contain_any=["Sweden"]))).lines(limit=0) == [
        "gold audit: 0 findings on 0 of 1 probes"]


def test_a_folder_with_no_probe_is_an_error_naming_every_path_given(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "c1.yaml").write_text(dump_yaml({"id": "c1", "sessions": []}), encoding="utf-8")
    assert main(["audit", str(first), str(second)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"error: {first}, {second}: no scenario or probe found; give a suite folder\n"


def test_the_json_is_indented_and_keeps_non_ascii_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(tmp_path, _conversation(_probe("q1", must_contain_any=["Zürich"])))
    assert main(["audit", str(folder), "--json"]) == 1
    out = capsys.readouterr().out
    assert out == json.dumps(audit_suite([folder]).as_json(), indent=2, ensure_ascii=False) + "\n"
    assert "none of ['Zürich']" in out


def test_a_long_finding_wraps_with_its_continuation_indented_four_spaces_past_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    words = ["Valparaiso harbour", "Vina del Mar beach", "Atacama desert", "Torres del Paine"]
    folder = _suite(tmp_path, _conversation(_probe("q1", must_contain_any=words)))
    assert main(["audit", str(folder)]) == 1
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  c1/q1 [single_hop] absent:"))
    assert all(len(line) <= 80 for line in lines)
    # the finding's own two spaces, then the continuation's four (under the finding's text, past its id)
    assert lines[start + 1].startswith(" " * 6) and not lines[start + 1].startswith(" " * 7)


def test_malformed_parts_of_a_conversation_are_skipped_not_fatal() -> None:
    """The audit reads plain data before validation: a turn, item, session, probe block or check of the wrong
    shape is passed over, and the rest is still audited."""
    data = _conversation(_probe("q1", must_contain_any=["Lima"]), _probe("q2", must_contain_groups=[[], "Peru"]),
                         {"id": "q3", "category": "single_hop", "probe": "?", "expect": "Peru"},
                         {"id": "q4", "category": "single_hop", "probe": {"history": ["hi", {"role": "user"}]},
                          "expect": {"must_contain_any": ["Quito"]}})
    data["sessions"] += ["oops", {"id": "s2", "turns": ["oops", {"content": 5}, {"content": "We flew to Lima."}]}]
    data["items"] += ["oops", {"id": "i2", "content": None}]
    assert _kinds(data) == [("q4", "absent")]


def test_a_short_string_at_the_end_of_the_probe_message_is_found_word_bounded() -> None:
    asked = _probe("q1", must_contain_any=["CSV"])
    asked["probe"] = {"message": "Export it as CSV", "history": [{"role": "user", "content": "Hi."}]}
    assert _kinds(_conversation(asked)) == []


def test_a_blank_check_string_is_no_finding() -> None:
    assert _kinds(_conversation(_probe("q1", must_contain_any=["  "]))) == []


def test_the_conversations_words_are_whole_words_not_substrings() -> None:
    from harness.importers.audit import HaystackWords, composed

    words = HaystackWords(normalize("The ledgers of cms are in Postgres."))
    assert "ledgers" in words and "ledger" not in words and "" not in words and 5 not in words
    assert composed(words, "postgres://cms") and not composed(words, "postgres://ledger")


def test_an_absent_group_lists_its_first_four_strings() -> None:
    (finding,) = audit_conversation(_conversation(_probe("q1", must_contain_any=["Peru", "Lima", "Cusco", "Puno",
                                                                                  "Arequipa"])))
    assert finding.detail == "none of ['Peru', 'Lima', 'Cusco', 'Puno'] occurs in the conversation"


def test_a_gold_word_is_read_from_the_first_string_of_each_group_else_from_the_f1_reference() -> None:
    """The first string is the one an answer states; later ones are accepted variants. The published f1_reference
    is read only where no check says what to state (a spaced check is no finding for a glued reference)."""
    data = _conversation(_probe("q1", must_contain_any=["watching movies", "watchingmovies"]),
                         _probe("q2", must_contain_any=["watching movies"], f1_reference="watchingmovies"),
                         _probe("q3", f1_reference="watchingmovies"),
                         _probe("q4", must_contain_groups=[["Januarty 5"], ["Januarty 6"]]),
                         _probe("q5", must_contain_groups=[["watchingmovies"], ["watchingmovies tonight"]]))
    assert [(f.probe, f.kind, f.detail) for f in audit_conversation(data) if f.kind != "absent"] == [
        ("q3", "glued", "'watchingmovies' (written apart: 'watching movies')"),
        ("q4", "misspelled", "'Januarty' (unpassable as written; an answer would write 'January')"),
        ("q5", "glued", "'watchingmovies' (written apart: 'watching movies')")]


def test_a_contradiction_names_the_real_answer_from_the_reference_or_the_first_check() -> None:
    data = _conversation(_probe("q1", "adversarial", abstain=True, f1_reference="Sweden"),
                         _probe("q2", "adversarial", abstain=True, must_contain_any=["Sweden"], f1_reference="Oslo"),
                         _probe("q3", "adversarial", abstain=True, must_contain_any=["Sweden", "Oslo"]))
    assert [(f.probe, f.detail) for f in audit_conversation(data) if f.kind == "contradiction"] == [
        ("q1", "abstention probe with a real answer 'Sweden'"), ("q2", "abstention probe with a real answer 'Oslo'"),
        ("q3", "abstention probe with a real answer 'Sweden'")]


def test_a_split_finding_names_both_groups_and_skips_an_empty_one() -> None:
    data = _conversation(_probe("q1", must_contain_groups=[[], ["on 9 April"], ["2023"]]),
                         _probe("q2", must_contain_groups=[["9 April, 2023"], ["Sweden"]]))
    assert [(f.probe, f.detail) for f in audit_conversation(data) if f.kind == "split"] == [
        ("q1", "groups 'on 9 April' and '2023' are one date or number: 'on 9 April, 2023'")]


def test_a_scenario_file_without_an_id_is_audited_under_an_empty_one() -> None:
    (finding,) = audit_conversation({"category": "fact", "sessions": [], "expect": {"must_contain_any": ["Lima"]}})
    assert (finding.conversation, finding.probe, finding.scenario) == ("", "", "")
