"""Project settings: flag > RECALL_EVAL_* variable > recall-eval.toml / [tool.recall-eval] > default; .env never overrides."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from harness.cli.project_config import ProjectConfigError, apply_project_settings, read_env_file

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scenarios" / "smoke"


def _args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["run", *argv])


def test_a_flag_beats_the_environment_which_beats_the_file_which_beats_the_default(tmp_path: Path) -> None:
    (tmp_path / "recall-eval.toml").write_text('model = "offline/abstain"\nepochs = 2\nseed = 5\n', encoding="utf-8")
    env = {"RECALL_EVAL_EPOCHS": "3", "RECALL_EVAL_SEED": "7"}
    args = _args("--seed", "9")
    record = apply_project_settings(args, tmp_path, env)
    assert (args.models, args.epochs, args.seed, args.max_tokens) == (["offline/abstain"], 3, 9, None)
    assert record["sources"] == {"model": "recall-eval.toml", "epochs": "environment"}
    assert record["environment"] == ["RECALL_EVAL_EPOCHS", "RECALL_EVAL_SEED"]
    assert record["file_values"] == {"model": ["offline/abstain"], "epochs": 2, "seed": 5}


def test_pyprojects_tool_table_is_read_and_paths_are_the_files_folders(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.recall-eval]\nscenarios = "suites/mine"\n'
                                             'reports_dir = "nightly"\narms = ["history_only", "recall"]\n', encoding="utf-8")
    args = _args()
    record = apply_project_settings(args, tmp_path, {})
    assert args.scenarios == [str(tmp_path / "suites/mine")] and args.reports_dir == str(tmp_path / "nightly")
    assert args.arms == ["history_only", "recall"] and record["file"] == str(tmp_path / "pyproject.toml")


def test_a_variable_holds_a_list_space_separated(tmp_path: Path) -> None:
    args = _args()
    apply_project_settings(args, tmp_path, {"RECALL_EVAL_MODEL": "openai/a  openai/b", "RECALL_EVAL_ARMS": "recall"})
    assert args.models == ["openai/a", "openai/b"] and args.arms == ["recall"]


def test_no_file_and_no_variable_changes_nothing(tmp_path: Path) -> None:
    args = _args()
    assert apply_project_settings(args, tmp_path, {}) is None and args.models is None and args.epochs is None


@pytest.mark.parametrize("extra", [["--resume", "somewhere"], ["--rerun-failing", "somewhere"]])
def test_a_resumed_or_repeated_run_keeps_its_own_settings(extra: list[str], tmp_path: Path) -> None:
    (tmp_path / "recall-eval.toml").write_text("epochs = 2\n", encoding="utf-8")
    args = _args(*extra)
    assert apply_project_settings(args, tmp_path, {"RECALL_EVAL_SEED": "3"}) is None and args.epochs is None


def test_dotenv_sets_only_what_the_environment_lacks(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-from-file\nexport RECALL_EVAL_MODEL=offline/abstain\nHOME=/x\n",
                                   encoding="utf-8")
    env = {"HOME": "/root"}
    assert read_env_file(tmp_path, env) == ["OPENAI_API_KEY", "RECALL_EVAL_MODEL"]
    assert env == {"HOME": "/root", "OPENAI_API_KEY": "sk-from-file", "RECALL_EVAL_MODEL": "offline/abstain"}
    args = _args()
    apply_project_settings(args, tmp_path, {})
    assert args.models == ["offline/abstain"]  # a setting in .env is an environment setting


@pytest.mark.parametrize(("text", "message"), [
    ("epochs = 0\n", "recall-eval.toml: epochs = 0: Input should be greater than or equal to 1"),
    ("epoch = 2\n", "recall-eval.toml: epoch: unknown setting; did you mean epochs?"),
    ('model = "a,b"\n', "recall-eval.toml: model = 'a,b': one litellm model string per entry, no comma"),
    ("epochs = [\n", "recall-eval.toml: not readable TOML"),
])
def test_a_bad_setting_names_the_file_and_key(text: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "recall-eval.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ProjectConfigError) as caught:
        apply_project_settings(_args(), tmp_path, {})
    assert str(caught.value).startswith(str(tmp_path / message.split(": ", 1)[0]))
    assert message.split(": ", 1)[1] in str(caught.value)


def test_a_bad_variable_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ProjectConfigError, match="environment variable RECALL_EVAL_EPOCHS: epochs = 'many': "):
        apply_project_settings(_args(), tmp_path, {"RECALL_EVAL_EPOCHS": "many"})


def test_settings_in_two_places_are_refused(tmp_path: Path) -> None:
    (tmp_path / "recall-eval.toml").write_text("epochs = 2\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.recall-eval]\nepochs = 3\n", encoding="utf-8")
    with pytest.raises(ProjectConfigError, match="keep them in one place"):
        apply_project_settings(_args(), tmp_path, {})


def test_a_bad_project_file_is_exit_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "recall-eval.toml").write_text("max_concurrency = -1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--plan"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"recall-eval run: error: {tmp_path / 'recall-eval.toml'}: max_concurrency = -1: ")
    assert "Traceback" not in err


def test_a_run_records_where_its_settings_came_from_and_never_a_dotenv_value(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "recall-eval.toml").write_text(
        f'scenarios = ["{SMOKE}"]\narms = ["history_only"]\nreports_dir = "nightly"\n'
        'api_base = "http://user:hunter2@127.0.0.1:9/v1"\n', encoding="utf-8")
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-dotenv-secret-0123456789\nRECALL_EVAL_MODEL=offline/abstain\n",
                                   encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "RECALL_EVAL_MODEL"):  # unset, and unset again after the test: .env sets them
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    assert main(["run", "--no-progress", "--cache-dir", str(tmp_path / "cache")]) in (0, 1)
    capsys.readouterr()
    assert os.environ["OPENAI_API_KEY"] == "sk-dotenv-secret-0123456789"  # for litellm; never written below
    (run,) = (tmp_path / "nightly").iterdir()
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert manifest["models"] == ["offline/abstain"] and manifest["arms"] == ["history_only"]
    settings = manifest["parameters"]["settings_from"]
    assert settings["file"] == str(tmp_path / "recall-eval.toml") and settings["environment"] == ["RECALL_EVAL_MODEL"]
    assert settings["sources"] == {"model": "environment", "arms": "recall-eval.toml", "scenarios": "recall-eval.toml",
                                   "api_base": "recall-eval.toml", "reports_dir": "recall-eval.toml"}
    for path in run.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert b"sk-dotenv-secret" not in text and b"hunter2" not in text, path
