"""``compare A B --pair OLD=NEW``: two models compared across runs, scenario by scenario, with the run's own rule.

The runs are real offline runs of the starter suite's project facts, knowledge
updates and decisions in the recall arm: ``offline/reference`` answers 7 of
the 20, ``offline/abstain`` none, so continuity drops by 0.35 with 7 scenarios
broken and none fixed (exact p = 2/2^7 = 0.016): a proven regression.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.analysis import decide_paired, paired_evidence
from harness.cli import main
from harness.runs.regression import paired_change

REPO = Path(__file__).resolve().parents[2]
STARTER = REPO / "scenarios" / "starter"
SUBSET = ["--filter", "category:project_fact", "--filter", "category:knowledge_update", "--filter",
          "category:decision", "--arms", "recall", "--no-progress", "--no-cache"]
FIRST_SCREEN = 24


def _run(out: Path, *args: str, subset: list[str] = SUBSET) -> Path:
    code = main(["run", "--scenarios", str(STARTER), *subset, "--out", str(out), *args])
    assert code in (0, 1) and (out / "summary.json").is_file()
    return out


def _router(path: Path, model: str) -> Path:
    path.write_text(f"model_list:\n  - model_name: prod\n    litellm_params:\n      model: {model}\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pairs")
    return {
        "reference": _run(root / "reference", "--model", "offline/reference"),
        "abstain": _run(root / "abstain", "--model", "offline/abstain"),
        "prod-reference": _run(root / "prod-reference", "--router-config",
                               str(_router(root / "reference.yaml", "offline/reference")), "--model", "prod"),
        "prod-abstain": _run(root / "prod-abstain", "--router-config",
                             str(_router(root / "abstain.yaml", "offline/abstain")), "--model", "prod"),
    }


def _compare(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.setenv("COLUMNS", "80")
    code = main(["compare", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_one_model_each_is_paired_and_a_continuity_drop_is_flagged_on_the_first_screen(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = _compare(capsys, monkeypatch, str(runs["reference"]), str(runs["abstain"]))
    assert code == 1
    lines = out.splitlines()
    first = "\n".join(lines[:FIRST_SCREEN])
    assert "--pair offline/reference=offline/abstain says" in first  # paired without being asked, and said
    assert "✗ recall: continuity_accuracy drop from A to B +0.35" in first
    table = next(line for line in lines if line.lstrip().startswith("continuity"))
    assert table.split() == ["continuity", "0.350", "0.000", "-0.35", "[-0.57,", "-0.13]", "0.016", "✗", "worse"]
    assert lines.index(table) < FIRST_SCREEN
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]


def test_the_paired_row_is_the_runs_own_rule_on_the_same_scenarios(runs: dict[str, Path]) -> None:
    samples = [[json.loads(line) for line in (runs[name] / "scores.jsonl").read_text().splitlines() if line]
               for name in ("reference", "abstain")]
    change = paired_change(*samples, model="offline/reference", model_b="offline/abstain", arm="recall",
                           category="all", metric="continuity_accuracy", higher_is_better=True)
    assert change is not None and change.status == "worse"
    e = change.evidence
    assert (e.n, e.up, e.down, round(e.diff, 2), round(e.p_value, 4)) == (20, 0, 7, -0.35, 0.0156)

    def means(rows: list[dict], model: str) -> dict[str, float]:
        return {r["scenario_id"]: float(next(s["value"] for s in r["scores"] if s["name"] == "continuity"))
                for r in rows if r["model"] == model and r["status"] == "ok"}

    a, b = means(samples[0], "offline/reference"), means(samples[1], "offline/abstain")
    ids = sorted(a)
    direct = paired_evidence([a[i] for i in ids], [b[i] for i in ids])  # B - A, as the verdict computes a gain
    assert (direct.ci_low, direct.ci_high, direct.p_value) == (e.ci_low, e.ci_high, e.p_value)
    assert decide_paired(direct, direction="gain", threshold=0.0, what="x").passed is False
    back = paired_change(samples[1], samples[0], model="offline/abstain", model_b="offline/reference", arm="recall",
                         category="all", metric="continuity_accuracy", higher_is_better=True)
    assert back is not None and back.status == "better" and back.evidence.diff == pytest.approx(0.35)


def test_json_holds_every_paired_row_with_the_exact_test(runs: dict[str, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "cmp.json"
    code, _, _ = _compare(capsys, monkeypatch, str(runs["reference"]), str(runs["abstain"]), "--json", str(out))
    data = json.loads(out.read_text(encoding="utf-8"))
    assert code == 1 and data["schema_version"] == 1
    assert data["pairing"] == {"pairs": [["offline/reference", "offline/abstain"]], "how": "one model each"}
    rows = {(r["arm"], r["category"], r["metric"]): r for r in data["metrics"]}
    row = rows[("recall", "all", "continuity_accuracy")]
    assert row["paired"]["status"] == "worse" and row["regression"] is True
    assert (row["paired"]["up"], row["paired"]["down"], row["paired"]["n_units"]) == (0, 7, 20)
    assert rows[("recall", "project_fact", "continuity_accuracy")]["paired"]["status"] in ("worse", "undecided")


def test_one_model_behind_two_router_configs_compares_only_when_paired(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = str(runs["prod-reference"]), str(runs["prod-abstain"])
    code, _, err = _compare(capsys, monkeypatch, a, b)
    assert code == 2 and "pass --pair prod=prod" in err  # a nightly whose router changed is not silently compared
    code, out, _ = _compare(capsys, monkeypatch, a, b, "--pair", "prod=prod")
    assert code == 1
    assert "differs with the models (compared, not refused):" in out and "router config hash:" in out
    assert "✗ recall: continuity_accuracy drop" in out


@pytest.mark.parametrize(("subset", "named"), [
    (["--filter", "category:project_fact", "--arms", "recall", "--no-progress", "--no-cache"], "scenario ids"),
    ([*SUBSET[:-4], "--arms", "recall", "history_only", "--no-progress", "--no-cache"], "arms"),
])
def test_a_pairing_is_refused_only_by_what_breaks_it_and_names_it(
        runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        subset: list[str], named: str) -> None:
    other = _run(tmp_path / "other", "--model", "offline/abstain", "--temperature", "0.5", subset=subset)
    code, out, err = _compare(capsys, monkeypatch, str(runs["reference"]), str(other))
    assert code == 2
    broken = err.split("the model pairing does not hold (")[1].split(")")[0]
    assert named in broken.split(", ")
    assert "temperature" not in broken  # the model's own settings never refuse a pairing


def test_a_pair_naming_a_model_its_run_lacks_is_refused_with_the_runs_models(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _compare(capsys, monkeypatch, str(runs["reference"]), str(runs["abstain"]),
                              "--pair", "offline/reference=gpt-5")
    assert code == 2 and out == ""
    assert "--pair offline/reference=gpt-5: run B has no model 'gpt-5' (its models: offline/abstain)" in " ".join(
        err.split())
    code, _, err = _compare(capsys, monkeypatch, str(runs["reference"]), str(runs["abstain"]), "--pair", "nonsense")
    assert code == 2 and "expected OLD=NEW" in err
