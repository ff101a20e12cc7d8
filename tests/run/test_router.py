"""``--router-config``: the configuration is checked, hashed without credentials, and its groups are the run's models."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.cli import main  # noqa: E402
from harness.run.router import RouterConfigError, check_models, config_hash, load_router_config, without_credentials  # noqa: E402

SMOKE = Path(__file__).resolve().parents[2] / "scenarios" / "smoke"


def _config(tmp_path: Path, deployments: list[dict], settings: dict | None = None, name: str = "router.yaml") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"model_list": deployments, **({"router_settings": settings} if settings else {})}), encoding="utf-8")
    return path


def _deployment(model: str = "openai/gpt-4o-mini", key: str = "sk-aaaaaaaaaaaaaaaa", base: str = "https://a.example/v1", **info: str) -> dict:
    entry = {"model_name": "agent", "litellm_params": {"model": model, "api_key": key, "api_base": base}}
    return {**entry, "model_info": info} if info else entry


def test_config_hash_ignores_credentials_and_follows_the_deployments(tmp_path: Path) -> None:
    base = config_hash(load_router_config(_config(tmp_path, [_deployment()], name="a.yaml")))
    rotated = config_hash(load_router_config(_config(tmp_path, [_deployment(key="sk-bbbbbbbbbbbbbbbb")], name="b.yaml")))
    userinfo = config_hash(load_router_config(_config(tmp_path, [_deployment(base="https://u:pw@a.example/v1")], name="c.yaml")))
    other = config_hash(load_router_config(_config(tmp_path, [_deployment(model="openai/gpt-4o")], name="d.yaml")))
    assert base == rotated == userinfo != other


def test_deployments_get_readable_ids_without_credentials(tmp_path: Path) -> None:
    config = load_router_config(_config(tmp_path, [
        _deployment(id="primary"), _deployment(base="https://user:pw@b.example/v1?key=s3cret"), _deployment(base="https://user:pw@b.example/v1"),
    ]))
    assert [d["model_info"]["id"] for d in config.model_list] == [
        "primary", "openai/gpt-4o-mini @ https://b.example/v1", "openai/gpt-4o-mini @ https://b.example/v1 #2"]
    assert config.secrets() == ["sk-aaaaaaaaaaaaaaaa"]
    assert without_credentials("http://u:p@h:8080/v1?api-key=x") == "http://h:8080/v1"


@pytest.mark.parametrize(("data", "message"), [
    ({"model_list": []}, "non-empty 'model_list'"),
    ({"model_list": [{"litellm_params": {"model": "openai/x"}}]}, r"model_list\[0\]: needs model_name"),
    ({"model_list": [{"model_name": "agent", "litellm_params": {}}]}, r"model_list\[0\].litellm_params.model: missing"),
    ({"model_list": [{"model_name": "a", "litellm_params": {"model": "m"}}], "router_settings": [1]}, "router_settings must be a mapping"),
])
def test_a_bad_config_is_named_by_file_entry_and_field(tmp_path: Path, data: dict, message: str) -> None:
    path = tmp_path / "router.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RouterConfigError, match=message):
        load_router_config(path)


def test_a_model_that_is_not_a_group_is_refused_with_the_groups_named(tmp_path: Path) -> None:
    config = load_router_config(_config(tmp_path, [_deployment()]))
    with pytest.raises(RouterConfigError, match="its model groups: agent"):
        check_models(config, ["agent", "gpt-4o"])


def test_run_refuses_bad_router_flags_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, [_deployment()])
    common = ["run", "--scenarios", str(SMOKE), "--out", str(tmp_path / "run"), "--no-progress"]
    assert main([*common, "--router-config", str(tmp_path / "missing.yaml"), "--model", "agent"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main([*common, "--router-config", str(config), "--model", "nope"]) == 2
    assert "not a model_name" in capsys.readouterr().err
    assert main([*common, "--router-config", str(config), "--model", "agent", "--api-base", "http://127.0.0.1:1/v1"]) == 2
    err = capsys.readouterr().err
    assert "--api-base conflicts with --router-config" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()
