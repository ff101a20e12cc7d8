"""Scenario files too large to trust: refused with one ``file: ...`` line before the expensive step, in little memory.

Real ``recall-eval validate`` / ``run`` processes (the peak RSS is the
child's own, as in ``test_scenario_files.py``). The limits are the defaults
of :mod:`harness.scenarios.limits` unless a test lowers one through its
environment variable, which is part of what is tested.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fault.test_scenario_files import GOOD, _recall_eval


def _scenario_with_items(n: int) -> dict:
    """The good fixture scenario with ``n`` memory items (small ones, as an attacker would pad a file)."""
    import yaml

    data = yaml.safe_load(GOOD.read_text(encoding="utf-8"))
    template = data["items"][0]
    data["items"] = [{**template, "id": f"pad-{i}", "content": f"padding item {i}"} for i in range(n)]
    return data


def test_a_file_with_more_items_than_the_limit_is_refused_before_validation(tmp_path: Path) -> None:
    """30,000 items (default limit 25,000) in a JSON-syntax file: one line naming the file, the count and the setting, exit 1."""
    (tmp_path / "many.yaml").write_text(json.dumps(_scenario_with_items(30_000), default=str), encoding="utf-8")
    code, out, err, peak_kb = _recall_eval("validate", "many.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err, err
    first = out.splitlines()[0]
    assert first.startswith("many.yaml: items: 30,000 items is over the limit of 25,000") and "RECALL_EVAL_MAX_ITEMS" in first
    assert peak_kb < 400_000


def test_the_item_limit_is_configurable(tmp_path: Path, monkeypatch) -> None:
    """RECALL_EVAL_MAX_ITEMS=50: a file of 60 items is refused, one of 40 validates."""
    monkeypatch.setenv("RECALL_EVAL_MAX_ITEMS", "50")
    (tmp_path / "sixty.yaml").write_text(json.dumps(_scenario_with_items(60), default=str), encoding="utf-8")
    code, out, _, _ = _recall_eval("validate", "sixty.yaml", cwd=tmp_path)
    assert code == 1 and "60 items is over the limit of 50" in out
    forty = _scenario_with_items(40)
    (tmp_path / "sixty.yaml").unlink()
    (tmp_path / "forty.yaml").write_text(json.dumps(forty, default=str), encoding="utf-8")
    code, out, _, _ = _recall_eval("validate", "forty.yaml", cwd=tmp_path)
    assert "over the limit" not in out


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A 65 MiB file (default limit 64 MiB; sparse, so reading it would cost 65 MiB): refused from its size, the child stays small."""
    big = tmp_path / "huge.yaml"
    with big.open("wb") as handle:
        handle.truncate(65 * 2**20)
    code, out, err, peak_kb = _recall_eval("validate", "huge.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err, err
    assert out.splitlines()[0].startswith("huge.yaml: 65.0 MiB is over the 64 MiB limit for a scenario file; refused before reading")
    assert peak_kb < 65 * 1024


def test_a_large_yaml_file_is_refused_before_parsing(tmp_path: Path) -> None:
    """9 MiB of YAML block syntax (limit 8 MiB; parsing it would take gigabytes): refused before parsing, pointing to JSON syntax."""
    lines = ["id: big-yaml", "items:"] + [f"  - id: it-{i}\n    content: padding item number {i} of many" for i in range(160_000)]
    text = "\n".join(lines) + "\n"
    assert len(text) > 9 * 2**20 > 8 * 2**20
    (tmp_path / "big.yaml").write_text(text, encoding="utf-8")
    code, out, err, peak_kb = _recall_eval("validate", "big.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err, err
    first = out.splitlines()[0]
    assert first.startswith("big.yaml: ") and "over the 8 MiB limit for YAML syntax; refused before parsing" in first
    assert "JSON syntax" in first and "RECALL_EVAL_MAX_YAML_MB" in first
    assert peak_kb < 300_000


def test_run_with_a_filter_selecting_an_oversized_file_exits_2(tmp_path: Path, monkeypatch) -> None:
    """`run --filter` selecting a file over the size limit (lowered to 1 MiB): exit 2 before any model call, naming the file."""
    monkeypatch.setenv("RECALL_EVAL_MAX_SCENARIO_MB", "1")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "my-big.yaml").write_text(json.dumps(_scenario_with_items(9_000), default=str), encoding="utf-8")
    assert (suite / "my-big.yaml").stat().st_size > 2**20
    code, _, err, _ = _recall_eval("run", "--scenarios", "suite", "--filter", "my-big*", "--out", "run", "--no-progress", cwd=tmp_path)
    assert code == 2 and "Traceback" not in err
    assert "my-big.yaml: " in err and "over the 1 MiB limit" in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_a_bad_limit_setting_is_one_line(tmp_path: Path, monkeypatch) -> None:
    """RECALL_EVAL_MAX_SCENARIO_MB=lots: one line naming the variable and its value, no traceback."""
    monkeypatch.setenv("RECALL_EVAL_MAX_SCENARIO_MB", "lots")
    (tmp_path / "ok.yaml").write_text(GOOD.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err, _ = _recall_eval("validate", "ok.yaml", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err
    assert "RECALL_EVAL_MAX_SCENARIO_MB='lots': not a positive number" in out

