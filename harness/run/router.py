"""``--router-config FILE``: the run's models are model groups of a litellm Router.

The file is litellm's Router configuration (YAML or JSON): a ``model_list``
of deployments, each ``{model_name, litellm_params: {model, api_base,
api_key, rpm, tpm, ...}, model_info: {id}}``, and optionally
``router_settings`` (keyword arguments of ``litellm.Router``: ``num_retries``,
``allowed_fails``, ``cooldown_time``, ``routing_strategy``, ``fallbacks``...).
``--model`` values name model groups (``model_name``). Calls go through the
Router, so its load balancing, per-deployment limits, cooldowns, retries and
fallbacks apply.

What is recorded never holds a secret: each model call logs the deployment
that answered by its ``model_info.id`` (given, or ``<model> @ <api_base>``
without credentials), and ``run.json`` holds a hash of the configuration
with every credential-like field left out (:func:`config_hash`): rotating a
key keeps the hash, pointing a group at another model changes it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Field names whose values are credentials: left out of the hash, added to the redaction list.
_SECRET_FIELD = re.compile(r"key|token|secret|password|credential|authorization", re.IGNORECASE)


class RouterConfigError(ValueError):
    """A Router configuration that cannot be used; the message names the file, entry, field and fix."""


@dataclass(frozen=True)
class RouterConfig:
    """A checked Router configuration.

    Attributes:
        path: The file it was read from.
        model_list: Deployments, each with a ``model_info.id`` (given or derived).
        settings: ``router_settings``: further ``litellm.Router`` keyword arguments.
    """

    path: Path
    model_list: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def groups(self) -> list[str]:
        """Model group names, in file order."""
        return list(dict.fromkeys(d["model_name"] for d in self.model_list))

    def deployments(self, group: str) -> list[dict[str, Any]]:
        return [d for d in self.model_list if d["model_name"] == group]

    def underlying_models(self, group: str) -> list[str]:
        """The litellm model strings behind a group (for token counting and prices)."""
        return list(dict.fromkeys(d["litellm_params"]["model"] for d in self.deployments(group)))

    def secrets(self) -> list[str]:
        """Credential values written in the file itself (``os.environ/...`` references are not secrets)."""
        found: set[str] = set()

        def walk(value: Any, key: str = "") -> None:
            if isinstance(value, Mapping):
                for k, v in value.items():
                    walk(v, str(k))
            elif isinstance(value, list):
                for v in value:
                    walk(v, key)
            elif isinstance(value, str) and _SECRET_FIELD.search(key) and len(value) >= 8 and not value.startswith("os.environ/"):
                found.add(value)

        walk(self.model_list)
        walk(self.settings)
        return sorted(found, key=len, reverse=True)


def without_credentials(url: str | None) -> str | None:
    """``https://user:pw@host/v1?key=x`` -> ``https://host/v1``."""
    if not url:
        return url
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if not parts.hostname:
        return url
    netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))


def _scrubbed(value: Any) -> Any:
    """``value`` with credential-like fields removed and URLs stripped of credentials (for hashing)."""
    if isinstance(value, Mapping):
        return {str(k): (without_credentials(v) if str(k) == "api_base" and isinstance(v, str) else _scrubbed(v))
                for k, v in value.items() if not _SECRET_FIELD.search(str(k))}
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    return value


def config_hash(config: RouterConfig) -> str:
    """SHA-256 of the deployments and settings as canonical JSON, credentials left out."""
    payload = {"model_list": _scrubbed(config.model_list), "router_settings": _scrubbed(config.settings)}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def group_hash(config: RouterConfig, group: str) -> str:
    """SHA-256 of one group's deployments (credentials left out): part of its calls' cache key."""
    text = json.dumps(_scrubbed(config.deployments(group)), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RouterConfigError(f"--router-config {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RouterConfigError(f"--router-config {path}: cannot read it ({exc})") from None
    import yaml

    try:
        return yaml.safe_load(text)  # YAML is a superset of JSON: either form works
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise RouterConfigError(f"{path}{where}: not valid YAML or JSON ({getattr(exc, 'problem', exc)})") from None


def load_router_config(path: str | Path) -> RouterConfig:
    """Read and check a Router configuration; deployments without ``model_info.id`` get a readable one.

    Raises:
        RouterConfigError: unreadable file, no ``model_list``, or an entry without ``model_name`` or
            ``litellm_params.model``.
    """
    path = Path(path)
    data = _read(path)
    if not isinstance(data, dict) or not isinstance(data.get("model_list"), list) or not data["model_list"]:
        raise RouterConfigError(f"{path}: expected a mapping with a non-empty 'model_list' (litellm's Router format: "
                                "model_list: [{model_name: NAME, litellm_params: {model: PROVIDER/MODEL, api_base: URL}}])")
    settings = data.get("router_settings") or {}
    if not isinstance(settings, dict):
        raise RouterConfigError(f"{path}: router_settings must be a mapping of litellm.Router arguments, not {type(settings).__name__}")
    deployments, seen_ids = [], set()
    for index, entry in enumerate(data["model_list"]):
        where = f"{path}: model_list[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("model_name"), str) or not entry["model_name"]:
            raise RouterConfigError(f"{where}: needs model_name (the name --model refers to)")
        params = entry.get("litellm_params")
        if not isinstance(params, dict) or not isinstance(params.get("model"), str) or not params["model"]:
            raise RouterConfigError(f"{where}.litellm_params.model: missing; give the litellm model string, e.g. openai/gpt-4o-mini")
        info = dict(entry.get("model_info") or {})
        ident = str(info.get("id") or f"{params['model']} @ {without_credentials(params.get('api_base')) or 'default'}")
        base, n = ident, 2
        while ident in seen_ids:
            ident, n = f"{base} #{n}", n + 1
        seen_ids.add(ident)
        deployments.append({**entry, "model_info": {**info, "id": ident}})
    return RouterConfig(path=path, model_list=deployments, settings=dict(settings))


def check_models(config: RouterConfig, models: list[str]) -> None:
    """Every ``--model`` must name a group of the configuration.

    Raises:
        RouterConfigError: naming the models that are not groups, and the groups there are.
    """
    missing = [m for m in models if m not in config.groups]
    if missing:
        raise RouterConfigError(f"--model {', '.join(missing)}: not a model_name in {config.path} "
                                f"(its model groups: {', '.join(config.groups)}); with --router-config, --model names a group")


def build_router(config: RouterConfig) -> Any:
    """A ``litellm.Router`` over the configuration (litellm is imported here, not before)."""
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    try:
        return litellm.Router(model_list=[dict(d) for d in config.model_list], **config.settings)
    except TypeError as exc:
        raise RouterConfigError(f"{config.path}: router_settings: {exc}") from None


def answered_by(response: Any) -> str | None:
    """The ``model_info.id`` of the deployment that answered a Router call (None outside a Router)."""
    hidden = getattr(response, "_hidden_params", None) or {}
    ident = hidden.get("model_id")
    return str(ident) if ident else None
