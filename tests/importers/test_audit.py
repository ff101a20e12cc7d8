"""``recall-eval audit SUITE``: the checks no answer could pass, found in a suite and written by every import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.importers.audit import audit_conversation, audit_suite, found, normalize
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
