"""A ``forgotten`` canary must tell its story: stated in the probe's scope, withdrawn later there, archived, not in view."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from harness.scenarios import Problem, load_suite

ROOT = Path(__file__).resolve().parents[2]
STARTER = ROOT / "scenarios" / "starter"
HOME = STARTER / "forget-01-home-address.yaml"


def _variant(tmp_path: Path, change) -> list[Problem]:
    data: dict[str, Any] = yaml.safe_load(HOME.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / HOME.name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return [p for p in load_suite([path]).problems if p.severity == "error"]


def _messages(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in problems]


def test_the_starter_forgetting_scenarios_validate_cleanly() -> None:
    suite = load_suite(sorted(STARTER.glob("forget-*.yaml")))
    assert len(suite.scenarios) == 4 and suite.problems == []


def test_a_forgotten_fact_nobody_stated_is_an_error_at_the_canary(tmp_path: Path) -> None:
    def change(d):
        d["expect"]["canaries"][0]["text"] = "Rue de Rivoli"
    (field, message), = _messages(_variant(tmp_path, change))
    assert field == "expect.canaries[0].text"
    assert message.startswith("no earlier session of the probe's scope (global sessions only) states this forgotten fact")


def test_a_forgotten_fact_never_withdrawn_is_an_error_saying_to_make_it_stale(tmp_path: Path) -> None:
    def change(d):
        d["sessions"][1]["turns"][0]["content"] = "I've moved out of that flat."
    problems = _messages(_variant(tmp_path, change))
    assert [f for f, _ in problems] == ["expect.canaries[0].text", "expect.canaries[1].text"]
    assert "nothing asks to forget this fact after session s-2026-01-12-invoices" in problems[0][1]
    assert "make the canary stale if it was corrected" in problems[0][1]


def test_a_forget_request_before_the_fact_was_stated_does_not_withdraw_it(tmp_path: Path) -> None:
    """Bug: any forget request in scope counted, even one made before the fact was given."""
    def change(d):
        d["sessions"][0]["turns"].insert(0, {"role": "user", "content": "Forget the old billing setup."})
        d["sessions"][1]["turns"][0]["content"] = "I've moved out of that flat."
    assert "nothing asks to forget" in _messages(_variant(tmp_path, change))[0][1]


def test_a_forgotten_fact_in_an_active_item_of_the_probes_scope_is_an_error(tmp_path: Path) -> None:
    def change(d):
        d["items"][0]["state"] = "active"
    problems = _messages(_variant(tmp_path, change))
    assert problems[0] == ("expect.canaries[0].text",
                           "item it-home-address of the probe's scope holds this forgotten fact but is active: a good "
                           "memory no longer serves it, so store it with state: archived (or leave it out)")


def test_a_forgotten_fact_in_the_probes_own_message_is_an_error(tmp_path: Path) -> None:
    def change(d):
        d["probe"]["message"] = "Is 14 Rue Oberkampf still my address?"
    assert any("appears in the probe's own message or history" in m for _, m in _messages(_variant(tmp_path, change)))


def test_a_forgotten_fact_stated_only_in_another_workspace_is_an_error(tmp_path: Path) -> None:
    """Bug: sessions of every workspace searched, so another workspace's fact passed as this scope's."""
    def change(d):
        for session in d["sessions"]:
            session["workspace"] = "ws-home"
        d["items"][0]["workspace"] = "ws-home"
        d["items"][1]["workspace"] = "ws-home"
    assert any(m.startswith("no earlier session of the probe's scope") for _, m in _messages(_variant(tmp_path, change)))


def test_validate_exits_1_with_a_one_line_message_naming_the_file_and_field(tmp_path: Path) -> None:
    data = yaml.safe_load(HOME.read_text(encoding="utf-8"))
    data["items"][0]["state"] = "active"
    path = tmp_path / HOME.name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "validate", str(path)], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr + done.stdout
    assert "expect.canaries[0].text" in done.stdout + done.stderr and HOME.name in done.stdout + done.stderr
