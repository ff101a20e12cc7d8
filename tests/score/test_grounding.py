"""The grounding judge: prompt, parsing, cache, calibration and its place in the summary (no network)."""

from __future__ import annotations

import json

import pytest

from harness.score.grounding import (
    GroundingJudge,
    build_messages,
    calibrate,
    load_calibration,
    parse_findings,
    visible_context,
)
from tests.score.scoring_factories import make_record, make_scenario, tool_call


class _Scripted:
    """A grounding completer that flags every answer containing one of ``needles``; records prompts."""

    def __init__(self, *needles: str, reply: str | None = None) -> None:
        self.needles, self.reply = needles, reply
        self.prompts: list[list[dict[str, str]]] = []

    def __call__(self, model, messages):
        self.prompts.append(messages)
        if self.reply is not None:
            return self.reply
        answer = _answer_of(messages)
        found = [n for n in self.needles if n in answer]
        return json.dumps({"unsupported": [{"claim": n, "why": "not in the context"} for n in found]})


def _answer_of(messages) -> str:
    return messages[-1]["content"].split("<<<ANSWER\n")[-1].rsplit("\nANSWER>>>", 1)[0]


@pytest.mark.parametrize(("raw", "claims"), [
    ('{"unsupported": []}', []),
    ('{"unsupported": [{"claim": "CircleCI", "why": "never mentioned"}]}', ["CircleCI"]),
    ('```json\n{"unsupported": [{"claim": "port 3001", "why": "x"}]}\n```', ["port 3001"]),
    ('Here you go: {"unsupported": ["Globex", "April 30"]} - hope that helps', ["Globex", "April 30"]),
    ('["Globex"]', ["Globex"]),
    ('{"unsupported": [{"specific": "Node 20"}, {"claim": "Node 20"}]}', ["Node 20"]),  # deduplicated
    ('{"note": {"x": 1}} {"unsupported": [{"claim": "Inter"}]}', ["Inter"]),  # nested objects before it
    # the outermost object is read first: a list in another field is not the findings
    ('{"checked": ["Postgres 15"], "unsupported": [{"claim": "Cloud SQL"}]}', ["Cloud SQL"]),
    ('["Globex", "April 30"]\n[end of list]', ["Globex", "April 30"]),  # bracketed prose after a bare list
    ('I {think} so: {"unsupported": ["Globex"]}', ["Globex"]),  # braces that are not JSON before it
    ('{{"checked": ["Postgres 15"], "unsupported": ["Cloud SQL"]}}', ["Cloud SQL"]),  # doubled template braces
])
def test_findings_are_read_robustly(raw, claims):
    assert parse_findings(raw) == (claims, None)


@pytest.mark.parametrize("raw", [
    "", "I think the answer is fine.", '{"verdict": "pass"}', '{"unsupported": "none"}',
    '{"unsupported": [{"why": "no claim field"}]}', '{"unsupported": [', "I don't know.",
])
def test_malformed_reply_is_recorded_never_raised(raw, tmp_path):
    found, why = parse_findings(raw)
    assert found is None and "no JSON list" in why
    judge = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=lambda m, msgs: raw)
    verdict = judge([{"role": "user", "content": "Which CI?"}], "CircleCI.")
    assert verdict.status == "malformed" and verdict.unsupported == [] and verdict.raw == raw
    assert judge.malformed == 1


def test_visible_context_is_everything_but_the_final_answer():
    sc = make_scenario()
    record = make_record(sc, "Billing runs Postgres 15.",
                         calls=[tool_call(["it-pg-version"], "Billing runs Postgres 15")])
    record = record.model_copy(update={"messages": [
        {"role": "system", "content": "You are careful.\n[Earlier conversation s1]\nwe use Postgres 15"},
        {"role": "user", "content": "Which Postgres does billing run?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "memory_search", "arguments": '{"terms": ["pg"]}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Billing runs Postgres 15"},
        {"role": "assistant", "content": "Billing runs Postgres 15."},
    ]})
    context = visible_context(record.messages)
    assert [m["role"] for m in context] == ["system", "user", "assistant", "tool"]
    assert context[2]["content"] == 'called memory_search({"terms": ["pg"]})'
    assert "we use Postgres 15" in context[0]["content"] and context[3]["content"] == "Billing runs Postgres 15"


def test_answer_cut_off_at_the_tool_round_limit_is_not_its_own_context():
    call = {"id": "c2", "type": "function", "function": {"name": "memory_search", "arguments": "{}"}}
    messages = [{"role": "user", "content": "Which CI?"},
                {"role": "assistant", "content": "You use CircleCI.", "tool_calls": [call]}]
    assert visible_context(messages) == [{"role": "user", "content": "Which CI?"}]


def test_prompt_holds_context_and_answer_and_is_blind_to_arm_and_answer_key():
    sc = make_scenario()
    record = make_record(sc, "Billing runs Postgres 15.", arm="history_only")
    messages = build_messages(visible_context(record.messages), record.final_answer)
    text = json.dumps(messages)
    assert "Which Postgres does billing run?" in text and "Billing runs Postgres 15." in text
    assert "plausible is not supported" in messages[0]["content"]
    for hidden in ("history_only", "recall", "full_history", "it-pg-version", "Postgres 13", "must_contain"):
        assert hidden not in text


def test_grounding_results_are_cached_on_disk(tmp_path):
    completer = _Scripted("CircleCI")
    context = [{"role": "user", "content": "Which CI?"}]
    first = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)(context, "CircleCI.")
    again_judge = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)
    again = again_judge(context, "CircleCI.")
    assert first.unsupported == again.unsupported == ["CircleCI"] and again.cached and len(completer.prompts) == 1
    assert (again_judge.calls, again_judge.cached) == (0, 1)


def test_corrupt_cached_grounding_is_asked_again(tmp_path):
    completer = _Scripted("CircleCI")
    context = [{"role": "user", "content": "Which CI?"}]
    GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)(context, "CircleCI.")
    (cached,) = tmp_path.glob("*.json")
    cached.write_text('{"status": "o', encoding="utf-8")
    again = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)(context, "CircleCI.")
    assert again.unsupported == ["CircleCI"] and not again.cached and len(completer.prompts) == 2


# ---- calibration ----

class _LabelGrounding:
    """A perfect grounding judge: flags exactly the calibration items labelled ungrounded."""

    def __init__(self) -> None:
        self.found = {item["answer"]: item.get("unsupported", []) if item["label"] == "ungrounded" else []
                      for item in load_calibration()}

    def __call__(self, model, messages):
        return json.dumps({"unsupported": self.found[_answer_of(messages)]})


def test_calibration_set_is_large_and_split_in_thirds():
    items = load_calibration()
    groups = {g: [i for i in items if i["group"] == g] for g in ("unsupported", "supported", "edge")}
    assert len(items) >= 60 and len({i["id"] for i in items}) == len(items)
    assert all(len(members) >= len(items) // 3 for members in groups.values())
    assert all(i["label"] == "ungrounded" and i["unsupported"] for i in groups["unsupported"])
    assert all(i["label"] == "grounded" for i in groups["supported"])
    edge_labels = {i["label"] for i in groups["edge"]}
    assert edge_labels == {"grounded", "ungrounded"}


def test_perfect_grounding_judge_calibrates_to_zero_errors_and_kappa_one(tmp_path):
    result = calibrate(GroundingJudge(model="test/perfect", cache_dir=tmp_path, complete=_LabelGrounding()))
    assert result.as_dict() == {"false_positive_rate": 0.0, "false_negative_rate": 0.0, "cohen_kappa": 1.0,
                                "n": len(load_calibration())}


def test_lenient_grounding_judge_has_kappa_zero_not_its_raw_agreement(tmp_path):
    lenient = GroundingJudge(model="test/lenient", cache_dir=tmp_path, complete=lambda m, msgs: '{"unsupported": []}')
    result = calibrate(lenient)
    share_grounded = sum(i["label"] == "grounded" for i in load_calibration()) / result.n
    assert (result.false_positive_rate, result.false_negative_rate) == (0.0, 1.0)
    assert result.cohen_kappa == 0.0 and share_grounded > 0.4  # agreeing on 48% of items is no skill


def test_suspicious_grounding_judge_has_false_positive_rate_one(tmp_path):
    paranoid = GroundingJudge(model="test/paranoid", cache_dir=tmp_path,
                              complete=lambda m, msgs: '{"unsupported": ["everything"]}')
    result = calibrate(paranoid)
    assert (result.false_positive_rate, result.false_negative_rate, result.cohen_kappa) == (1.0, 0.0, 0.0)


def test_malformed_calibration_replies_count_as_no_finding_and_are_named(tmp_path):
    result = calibrate(GroundingJudge(model="test/m", cache_dir=tmp_path, complete=lambda m, msgs: "sure!"))
    assert result.false_negative_rate == 1.0 and all(m["status"] == "malformed" for m in result.mistakes)
    assert len(result.mistakes) == result.n


# ---- in the summary ----

def _summary(records, scenarios, tmp_path, grounding_complete, judge=None):
    from harness.analysis.verdict import VerdictConfig
    from harness.records import RunManifest
    from harness.report import build_summary

    manifest = RunManifest(run_id="r", harness_version="0", status="complete", started_at="t", models=["m"],
                           arms=["history_only", "recall"], epochs=1, seed=0, scenario_paths=[],
                           scenario_ids=sorted(scenarios), suite_hash="x", sample_count=len(records))
    grounding = GroundingJudge(model="test/g", cache_dir=tmp_path / "g", complete=grounding_complete)
    return build_summary(manifest, records, scenarios, config=VerdictConfig(), judge=judge, grounding=grounding)


def test_grounding_judge_runs_once_per_answered_sample_and_adds_ungrounded_claims(tmp_path):
    sc, abs_sc = make_scenario("fact-01"), make_scenario("abs-01", abstain=True, category="abstention")
    records = [
        make_record(sc, "Billing runs Postgres 15 on Cloud SQL.", arm="history_only"),
        make_record(sc, "Billing runs Postgres 15.", arm="recall"),
        make_record(abs_sc, "I don't know.", arm="history_only"),
        make_record(abs_sc, "It's CircleCI.", arm="recall"),
        make_record(sc, arm="recall", epoch=1, error=True),
    ]
    completer = _Scripted("Cloud SQL", "CircleCI")
    summary, samples = _summary(records, {"fact-01": sc, "abs-01": abs_sc}, tmp_path, completer)
    run_prompts = [p for p in completer.prompts if "Which Postgres does billing run?" in p[-1]["content"]]
    assert sorted(_answer_of(p) for p in run_prompts) == ["Billing runs Postgres 15 on Cloud SQL.",
                                                          "Billing runs Postgres 15.", "It's CircleCI."]
    grounding = summary["judge"]["grounding"]
    assert (grounding["model"], grounding["calls"], grounding["judged"], grounding["ungrounded"]) == ("test/g", 3, 3, 2)
    assert set(grounding["calibration"]) == {"false_positive_rate", "false_negative_rate", "cohen_kappa", "n", "calls",
                                             "prompt_tokens", "completion_tokens", "cost_usd", "unpriced_calls"}
    assert grounding["calibration"]["n"] >= 60 and grounding["calibration"]["calls"] == grounding["calibration"]["n"]
    assert grounding["calibration"]["unpriced_calls"] == grounding["calibration"]["calls"]  # a plain-string completer: no usage
    outcome = {(s["scenario_id"], s["arm"]): s["outcome"] for s in samples if s["epoch"] == 0}
    assert outcome[("fact-01", "history_only")] == "wrong" and outcome[("fact-01", "recall")] == "correct"


def test_grounding_prompts_never_name_the_arm(tmp_path):
    sc = make_scenario()
    records = [make_record(sc, "Billing runs Postgres 15.", arm=arm) for arm in ("history_only", "recall")]
    completer = _Scripted()
    _summary(records, {sc.id: sc}, tmp_path, completer)
    assert all("history_only" not in json.dumps(p) and "recall|" not in json.dumps(p) for p in completer.prompts)


def test_malformed_grounding_replies_are_counted_in_the_summary(tmp_path):
    sc = make_scenario()
    summary, samples = _summary([make_record(sc)], {sc.id: sc}, tmp_path, _Scripted(reply="no idea"))
    assert summary["judge"]["grounding"]["malformed"] == 1 and samples[0]["outcome"] == "correct"


def test_rubric_and_grounding_judges_share_the_judge_block(tmp_path):
    from harness.score.judge import Judge

    sc = make_scenario(expect={"rubric": "Pass only if Postgres 15."})
    rubric = Judge(model="test/g", cache_dir=tmp_path / "r",
                   complete=lambda m, msgs: '{"verdict": "pass", "reason": "states it"}')
    summary, _ = _summary([make_record(sc)], {sc.id: sc}, tmp_path, _Scripted(), judge=rubric)
    block = summary["judge"]
    assert (block["model"], block["calls"]) == ("test/g", 1)  # the run's calls; calibration's counted apart
    assert set(block["calibration"]) == {"false_positive_rate", "false_negative_rate", "cohen_kappa", "n", "calls",
                                         "prompt_tokens", "completion_tokens", "cost_usd", "unpriced_calls"}
    assert block["calibration"]["calls"] == block["calibration"]["n"]
    assert block["grounding"]["calls"] == 1


# ---- the edges of each layer (issue 29) ----

@pytest.mark.parametrize("raw", [
    '{"unsupported": [42]}', '{"unsupported": [null]}', '{"unsupported": ["", "  "]}',
    '{"unsupported": [{"claim": ""}]}', '{"unsupported": [{"claim": "Cloud SQL"}, {"claim": 7}]}',
])
def test_a_finding_outside_the_accepted_shapes_is_malformed_not_supported(raw, tmp_path):
    assert parse_findings(raw)[0] is None
    verdict = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=lambda m, msgs: raw)(
        [{"role": "user", "content": "Which CI?"}], "CircleCI.")
    assert verdict.status == "malformed" and verdict.unsupported == []


def test_a_missing_reply_is_malformed_and_its_reason_shows_it_empty():
    why = "no JSON list of unsupported claims in the reply: ''"
    assert parse_findings("") == (None, why) and parse_findings(None) == (None, why)


def test_the_reason_of_a_long_malformed_reply_quotes_its_first_200_characters():
    raw = "a" * 150 + "b" * 150
    assert parse_findings(raw) == (None, f"no JSON list of unsupported claims in the reply: {raw[:200]!r}")


def test_a_malformed_verdict_carries_the_reason_it_could_not_be_read(tmp_path):
    verdict = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=lambda m, msgs: "looks fine")(
        [{"role": "user", "content": "Which CI?"}], "CircleCI.")
    assert verdict.error == "no JSON list of unsupported claims in the reply: 'looks fine'"


def test_a_cached_verdict_with_a_status_outside_ok_and_malformed_is_asked_again(tmp_path):
    completer = _Scripted("CircleCI")
    context = [{"role": "user", "content": "Which CI?"}]
    GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)(context, "CircleCI.")
    (cached,) = tmp_path.glob("*.json")
    data = json.loads(cached.read_text(encoding="utf-8"))
    cached.write_text(json.dumps({**data, "status": "grounded", "unsupported": []}), encoding="utf-8")
    again = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)(context, "CircleCI.")
    assert again.status == "ok" and again.unsupported == ["CircleCI"] and not again.cached
    assert len(completer.prompts) == 2


# ---- what the judge is shown, exactly ----

def test_visible_context_keeps_a_last_message_that_is_not_the_answer():
    messages = [{"role": "user", "content": "Which CI?"}, {"role": "tool", "content": "ci: Jenkins"}]
    assert visible_context(messages) == messages
    assert visible_context([]) == []


def test_visible_context_spells_out_messages_with_missing_fields_and_structured_content():
    messages = [
        {"content": [{"type": "text", "text": "Das Büro in Zürich"}]},  # no role; content parts, not a string
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1"},  # no function at all
            {"id": "c2", "function": {}},  # neither name nor arguments
            {"id": "c3", "function": {"name": "memory_get", "arguments": '{"id": "n1"}'}}]},
        {"role": "tool", "content": "n1: Zürich"},
        {"role": "assistant", "content": "The office is in Zürich."},
    ]
    assert visible_context(messages) == [
        {"role": "?", "content": '[{"type": "text", "text": "Das Büro in Zürich"}]'},
        {"role": "assistant", "content": 'called ?()\ncalled ?()\ncalled memory_get({"id": "n1"})'},
        {"role": "tool", "content": "n1: Zürich"},
    ]


def test_the_judge_receives_the_context_and_the_answer_in_marked_blocks():
    from harness.score.grounding import _SYSTEM

    context = [{"role": "user", "content": "Which CI?"}, {"content": "we use Jenkins"}, {"role": "tool"}]
    assert build_messages(context, "You use CircleCI.") == [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": "Everything the assistant could see:\n<<<CONTEXT\n"
                                    "[user]\nWhich CI?\n\n[?]\nwe use Jenkins\n\n[tool]\n"
                                    "\nCONTEXT>>>\n\n"
                                    "The assistant's final answer:\n<<<ANSWER\nYou use CircleCI.\nANSWER>>>"},
    ]
    assert build_messages([], "You use CircleCI.")[1]["content"] == (
        "Everything the assistant could see:\n<<<CONTEXT\n(nothing)\nCONTEXT>>>\n\n"
        "The assistant's final answer:\n<<<ANSWER\nYou use CircleCI.\nANSWER>>>")


def test_the_judge_is_told_what_counts_and_the_reply_format():
    system = build_messages([], "x")[0]["content"]
    assert system.startswith("You check one answer from an assistant for unsupported claims. ")
    for part in (
        "List every specific assertion in the answer about the user, their projects, colleagues, customers, "
        "systems, tools, settings, numbers, dates, decisions or past conversations that nothing visible supports",
        "a value stated as current when the visible context says it changed",
        "Be strict: plausible is not supported.",
        "Do NOT list: restatements or paraphrases of visible content",
        'Reply with JSON only: {"unsupported": [{"claim": "<the unsupported specific, quoted or short>", '
        '"why": "<one sentence>"}]} - an empty list when every specific is supported.',
    ):
        assert part in system


# ---- calling the judge model ----

def test_the_judge_model_is_asked_by_its_name(tmp_path):
    models = []
    GroundingJudge(model="test/g", cache_dir=tmp_path,
                   complete=lambda m, msgs: models.append(m) or '{"unsupported": []}')([], "Hi.")
    assert models == ["test/g"]


def test_each_judge_model_has_its_own_cached_findings(tmp_path):
    completer = _Scripted("CircleCI")
    context = [{"role": "user", "content": "Which CI?"}]
    for model in ("test/a", "test/b"):
        assert not GroundingJudge(model=model, cache_dir=tmp_path, complete=completer)(context, "CircleCI.").cached
    assert len(completer.prompts) == 2 and len(list(tmp_path.glob("*.json"))) == 2


def test_a_new_prompt_version_does_not_reuse_cached_findings(tmp_path, monkeypatch):
    from harness.score import grounding

    completer = _Scripted("CircleCI")
    context = [{"role": "user", "content": "Which CI?"}]
    GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)(context, "CircleCI.")
    monkeypatch.setattr(grounding, "PROMPT_VERSION", "grounding-v2")
    again = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=completer)(context, "CircleCI.")
    assert not again.cached and len(completer.prompts) == 2


def test_without_a_completer_the_judge_calls_litellm_at_its_endpoint_with_room_for_a_list(tmp_path, monkeypatch):
    from harness.score import judge as judge_module

    asked = []

    def fake_litellm(model, messages, *, api_base=None, max_tokens=300, timeout_s=None, retries=0):
        asked.append((model, messages, api_base, max_tokens, timeout_s, retries))
        return '{"unsupported": ["CircleCI"]}'

    monkeypatch.setattr(judge_module, "litellm_complete", fake_litellm)
    context = [{"role": "user", "content": "Which CI?"}]
    judge = GroundingJudge(model="local/qwen", cache_dir=tmp_path, api_base="http://127.0.0.1:8080/v1", timeout_s=9,
                           retries=2)
    assert judge(context, "CircleCI.").unsupported == ["CircleCI"]
    assert asked == [("local/qwen", build_messages(context, "CircleCI."), "http://127.0.0.1:8080/v1", 600, 9, 2)]


def test_counts_add_up_over_fresh_and_cached_judgements(tmp_path):
    replies = {"A": "no idea", "B": "sure", "C": '{"unsupported": []}'}
    judge = GroundingJudge(model="test/g", cache_dir=tmp_path, complete=lambda m, msgs: replies[_answer_of(msgs)])
    for answer in ("A", "B", "C", "A", "B"):
        judge([], answer)
    assert judge.summary() == {"model": "test/g", "calls": 3, "cached": 2, "malformed": 4}


# ---- calibration files ----

def _calibration_file(tmp_path, items):
    path = tmp_path / "calibration.yaml"
    path.write_text(json.dumps({"items": items}), encoding="utf-8")  # JSON is YAML
    return path


def _item(item_id, label, answer="I don't know.", **extra):
    return {"id": item_id, "group": "edge", "label": label, "answer": answer,
            "context": [{"role": "user", "content": "Which CI?"}], **extra}


@pytest.mark.parametrize("broken", [
    {"answer": None}, {"answer": 3}, {"context": "Which CI?"}, {"context": None},
])
def test_a_calibration_item_without_a_context_list_and_an_answer_string_is_refused_by_id(broken, tmp_path):
    from harness.score.judge import JudgeError

    item = {key: value for key, value in {**_item("g-02", "grounded"), **broken}.items() if value is not None}
    path = _calibration_file(tmp_path, [_item("g-01", "grounded"), item])
    with pytest.raises(JudgeError) as caught:
        load_calibration(path)
    assert str(caught.value) == f"{path}: items[1] ('g-02') needs a context list and an answer string"


def test_a_calibration_label_outside_grounded_and_ungrounded_is_refused(tmp_path):
    from harness.score.judge import JudgeError

    path = _calibration_file(tmp_path, [_item("g-01", "supported")])
    with pytest.raises(JudgeError) as caught:
        load_calibration(path)
    assert str(caught.value) == f"{path}: items[0].label is 'supported'; use 'grounded' or 'ungrounded'"


def test_calibration_names_exactly_the_items_it_got_wrong_or_could_not_read(tmp_path):
    path = _calibration_file(tmp_path, [
        _item("g-ok", "grounded", "right, nothing found"),
        _item("u-ok", "ungrounded", "right, Cloud SQL found"),
        _item("g-fp", "grounded", "wrong, Jenkins found"),
        _item("u-fn", "ungrounded", "wrong, nothing found"),
        _item("g-mal", "grounded", "unreadable"),
    ])
    replies = {"right, nothing found": '{"unsupported": []}', "right, Cloud SQL found": '["Cloud SQL"]',
               "wrong, Jenkins found": '["Jenkins"]', "wrong, nothing found": '{"unsupported": []}',
               "unreadable": "sure!"}
    result = calibrate(GroundingJudge(model="test/g", cache_dir=tmp_path / "cache",
                                      complete=lambda m, msgs: replies[_answer_of(msgs)]), path)
    assert result.mistakes == [
        {"id": "g-fp", "label": "grounded", "found": ["Jenkins"], "status": "ok"},
        {"id": "u-fn", "label": "ungrounded", "found": [], "status": "ok"},
        {"id": "g-mal", "label": "grounded", "found": [], "status": "malformed"},
    ]
    assert (result.n, result.false_positive_rate, result.false_negative_rate) == (5, 1 / 3, 1 / 2)
    assert result.cohen_kappa == pytest.approx(1 / 6)


def test_calibration_without_ungrounded_items_leaves_the_false_negative_rate_unknown(tmp_path):
    path = _calibration_file(tmp_path, [_item("g-01", "grounded"), _item("g-02", "grounded", "It is CircleCI.")])
    result = calibrate(GroundingJudge(model="test/g", cache_dir=tmp_path / "cache",
                                      complete=lambda m, msgs: '{"unsupported": []}'), path)
    assert result.as_dict() == {"false_positive_rate": 0.0, "false_negative_rate": None, "cohen_kappa": None, "n": 2}
    assert result.mistakes == []
