"""Project settings for ``recall-eval run``: a config file, ``RECALL_EVAL_*`` variables and ``.env``.

Precedence, highest first (the README's *Configuration* says the same):

1. a flag on the command line;
2. an environment variable ``RECALL_EVAL_<KEY>`` (``RECALL_EVAL_MODEL``,
   ``RECALL_EVAL_REPORTS_DIR``, ...; a list is written space-separated);
3. the project file of the working folder: ``recall-eval.toml`` (keys at its
   top) or the ``[tool.recall-eval]`` table of ``pyproject.toml`` (both at
   once is refused: one place per project);
4. the built-in default.

``.env`` in the working folder is read first (python-dotenv's parser) and
only sets variables that are not set already: the shell wins. It is where
credentials such as ``OPENAI_API_KEY`` live; its values are never written
anywhere (``run.json`` names the settings' sources, never a variable's
value). A run that continues (``--resume``) or repeats (``--rerun-failing``)
another keeps that run's settings: the project settings apply to new runs.

Example ``recall-eval.toml``::

    model = ["openai/gpt-4o-mini"]
    epochs = 3
    reports_dir = "nightly"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

CONFIG_FILE = "recall-eval.toml"
PYPROJECT = "pyproject.toml"
ENV_FILE = ".env"
ENV_PREFIX = "RECALL_EVAL_"
#: Settings whose values are folders or files: relative to the config file's folder (the working folder).
_PATHS = ("scenarios", "cache_dir", "reports_dir")
#: Settings that hold several values (a TOML list; space-separated in a variable).
_LISTS = ("model", "arms", "scenarios")
#: Setting key -> the ``run`` flag's argparse destination (the key itself when absent).
_DEST = {"model": "models"}


class ProjectConfigError(Exception):
    """The project's settings are unreadable or invalid; the message names the file (or variable), the key and the fix."""


class ProjectSettings(BaseModel):
    """The keys a project file (or ``RECALL_EVAL_<KEY>``) may set: the ``run`` flags of the same names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: list[str] | None = Field(None, description="litellm model strings (--model, repeatable)")
    arms: list[str] | None = Field(None, description="arms to run (--arms)")
    scenarios: list[str] | None = Field(None, description="suite folders or files (--scenarios)")
    epochs: int | None = Field(None, ge=1)
    seed: int | None = None
    max_concurrency: int | None = Field(None, ge=1)
    workers: int | None = Field(None, ge=1)
    max_tool_rounds: int | None = Field(None, ge=0)
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0)
    timeout: float | None = Field(None, gt=0, description="seconds per model call (--timeout)")
    retries: int | None = Field(None, ge=0)
    api_base: str | None = None
    judge_model: str | None = None
    cache_dir: str | None = None
    max_cost_usd: float | None = Field(None, gt=0)
    reports_dir: str | None = Field(None, description="where a new run's folder <UTC timestamp> is made (default reports)")

    @field_validator("model", "arms", "scenarios", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("model")
    @classmethod
    def _no_comma(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if "," in name or not name.strip():
                raise ValueError('one litellm model string per entry, no comma (a list for several: ["a", "b"])')
        return value


def read_env_file(folder: Path, environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Set the variables of ``folder/.env`` that ``environ`` (the process's) lacks; returns their names (never values)."""
    environ = os.environ if environ is None else environ
    path = folder / ENV_FILE
    if not path.is_file():
        return []
    from dotenv import dotenv_values

    added = []
    for name, value in dotenv_values(path).items():
        if value is not None and name not in environ:
            environ[name] = value
            added.append(name)
    return added


def _problem(source: str, exc: ValidationError, prefix: str = "") -> ProjectConfigError:
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        import difflib

        close = difflib.get_close_matches(key, list(ProjectSettings.model_fields), n=1)
        fix = f"did you mean {close[0]}?" if close else f"known keys: {', '.join(ProjectSettings.model_fields)}"
        return ProjectConfigError(f"{source}: {prefix}{key}: unknown setting; {fix}")
    value = error.get("input")
    return ProjectConfigError(f"{source}: {prefix}{key} = {value!r}: {error['msg'].removeprefix('Value error, ')}")


def read_config_file(folder: Path) -> tuple[Path | None, ProjectSettings]:
    """The project file of ``folder`` and its settings (no file: no settings)."""
    own, pyproject = folder / CONFIG_FILE, folder / PYPROJECT
    tables: list[tuple[Path, dict[str, Any], str]] = []
    for path, table in ((own, None), (pyproject, ("tool", "recall-eval"))):
        if not path.is_file():
            continue
        try:
            data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ProjectConfigError(f"{path}: not readable TOML: {exc}; fix the file or move it away") from None
        for part in table or ():
            data = data.get(part) if isinstance(data, dict) else None
        if data is not None:
            tables.append((path, data, "[tool.recall-eval] " if table else ""))
    if len(tables) > 1:
        raise ProjectConfigError(f"settings in both {own} and {pyproject} [tool.recall-eval]: keep them in one place")
    if not tables:
        return None, ProjectSettings()
    path, data, prefix = tables[0]
    if not isinstance(data, dict):
        raise ProjectConfigError(f"{path}: {prefix or 'the file'} is not a table of settings")
    try:
        return path, ProjectSettings.model_validate(data)
    except ValidationError as exc:
        raise _problem(str(path), exc, prefix) from None


def read_environment(environ: MutableMapping[str, str] | None = None) -> tuple[list[str], ProjectSettings]:
    """The ``RECALL_EVAL_<KEY>`` variables that are set (names) and their settings."""
    environ = os.environ if environ is None else environ
    names, values = [], {}
    for key in ProjectSettings.model_fields:
        name = ENV_PREFIX + key.upper()
        if environ.get(name, "").strip():
            values[key] = environ[name].split() if key in _LISTS else environ[name].strip()
            names.append(name)
    try:
        return names, ProjectSettings.model_validate(values)
    except ValidationError as exc:
        key = str(exc.errors()[0]["loc"][0])
        raise _problem(f"environment variable {ENV_PREFIX}{key.upper()}", exc) from None


def apply_project_settings(args: Any, folder: Path | None = None,
                           environ: MutableMapping[str, str] | None = None) -> dict[str, Any] | None:
    """Fill the ``run`` flags not given from the environment, then the project file; what run.json records of it.

    Returns None when no setting came from either; else ``{"file": path or None, "file_values": {...},
    "environment": [variable names], "sources": {key: "flag" | "environment" | file name}}``.
    The ``.env`` file is read whatever the command (its credentials are for litellm).
    """
    folder = folder or Path.cwd()
    read_env_file(folder, environ)
    if getattr(args, "command", None) != "run" or getattr(args, "resume", None) or getattr(args, "rerun_failing", None):
        return None
    path, from_file = read_config_file(folder)
    names, from_env = read_environment(environ)
    sources: dict[str, str] = {}
    for key in ProjectSettings.model_fields:
        dest = _DEST.get(key, key)
        if getattr(args, dest, None) is not None:
            continue
        for where, settings in (("environment", from_env), (path.name if path else "", from_file)):
            value = getattr(settings, key)
            if value is not None:
                if key in _PATHS:
                    value = [str(folder / v) for v in value] if isinstance(value, list) else str(folder / value)
                setattr(args, dest, value)
                sources[key] = where
                break
    if not sources:
        return None
    # (run.json writes it through harness.run's options, which redact an api_base's credentials)
    return {"file": str(path) if path else None, "file_values": from_file.model_dump(exclude_none=True),
            "environment": names, "sources": sources}
