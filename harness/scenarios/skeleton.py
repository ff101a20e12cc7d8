"""``recall-eval new scenario NAME`` and ``new suite NAME``: commented skeletons that validate as written.

A new scenario starts from a small, complete example (a fact stated in an
earlier session, a distractor beside it, a later probe that needs it) whose
comments say what each field is for and what to replace; it validates
without errors or warnings, so every problem ``validate`` shows afterwards
is one the author made. A suite is a folder with a ``_defaults.yaml``
(values every scenario in it inherits, and a place to declare categories)
and one such scenario. Nothing is overwritten: an existing file is an error.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from harness.scenarios.field_types import ID_PATTERN

SCENARIO_TEMPLATE = """\
# A recall-eval scenario: a fact from an earlier session that a later session needs.
# Replace the example with your own; `recall-eval validate {path}` checks it
# (`recall-eval schema --out scenario.schema.json` gives editors the schema).
id: {id}                      # unique in the suite: letters, digits, '.', '_', ':' or '-'
title: The web app's dev server listens on port 5174   # one line a report reader understands
category: project_fact        # preference, project_fact, decision, constraint, knowledge_update, temporal, abstention ...
tags: [example]               # free labels: `run --filter tag:example`
description: A project fact stated once in an earlier session answers a direct question later.

# The earlier sessions, oldest first. Only the memory arms can see them (through memory items);
# the history_only arm sees the probe alone.
sessions:
  - id: s-dev-port
    workspace: ws-web         # the project the session belongs to; memory never crosses workspaces
    started_at: 2026-01-12T10:00:00Z
    turns:                    # turn ids are t1, t2, ... in order (items cite them as sources)
      - role: user
        content: Heads up, the web app's dev server runs on port 5174 now.
      - role: assistant
        content: Got it, I'll use localhost:5174 for the web app from now on.
  - id: s-docs-preview
    workspace: ws-web
    started_at: 2026-01-20T15:00:00Z
    turns:
      - role: user
        content: The docs preview stays on port 5173, please don't move it.
      - role: assistant
        content: Understood, the docs preview keeps port 5173.

# What memory holds: what the earlier sessions left behind, as the store would keep it.
items:
  - id: it-dev-port
    content: The web app's dev server runs on port 5174.
    kind: context             # preference, context, knowledge ...
    workspace: ws-web
    keys: [dev server, port, {{key: "5174", type: code}}]   # what memory_search matches on
    sources: [{{session: s-dev-port, turn: t1}}]
    role: answer              # never shown to the agent: answer, supporting, distractor, stale, canary, other
  - id: it-docs-port
    content: The docs preview runs on port 5173.
    kind: context
    workspace: ws-web
    keys: [docs preview, port]
    sources: [{{session: s-docs-preview, turn: t1}}]
    role: distractor          # a near miss, so retrieval has to choose (validate warns without one)

# The later session: the question the agent must answer from memory.
probe:
  workspace: ws-web
  started_at: 2026-02-03T09:00:00Z
  message: Which port should I open for the web app's dev server?

# What a right answer holds. must_contain_all: every text; must_contain_any: one of them;
# must_contain_groups: one synonym of each group; must_not_contain: none of these.
expect:
  must_contain_all: ["5174"]
  must_not_contain: ["5173"]       # the distractor's port: an answer holding it took the wrong item
  relevant_items: [it-dev-port]   # the items that hold the answer (validate warns when none states it)
"""

DEFAULTS_TEMPLATE = """\
# Deep-merged UNDER every scenario in this folder: mappings merge key by key,
# lists and scalars a scenario gives replace these.
schema_version: 1
# Categories of your own (a built-in one needs no declaration), one sentence each:
# categories:
#   billing_fact: a fact about the billing service
probe:
  incognito: false
  policy:
    enabled: true
    agent_read_enabled: true
expect:
  abstain: false
"""


class SkeletonError(Exception):
    """A skeleton cannot be written: a bad name or an existing file; the message says which."""


def scenario_text(scenario_id: str, path: Path) -> str:
    """The commented skeleton of one scenario with this id (``path``: where it will live, for the comment)."""
    if not re.fullmatch(ID_PATTERN, scenario_id):
        raise SkeletonError(f"{scenario_id!r} is not a scenario id: use letters, digits, '.', '_', ':' or '-', "
                            "starting with a letter or digit (e.g. fact-07-dev-port)")
    return SCENARIO_TEMPLATE.format(id=scenario_id, path=path)


def _write_new(path: Path, text: str) -> Path:
    if path.exists():
        raise SkeletonError(f"{path} already exists; choose another name (nothing was written)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def new_scenario(name: str) -> Path:
    """Write ``NAME.yaml`` (or ``NAME`` when it ends in ``.yaml``), id the file's stem.

    Raises:
        SkeletonError: the stem is not an id, or the file exists.
    """
    path = Path(name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
    return _write_new(path, scenario_text(path.stem, path))


def new_suite(name: str) -> list[Path]:
    """Write the folder ``NAME`` with ``_defaults.yaml`` and one scenario, ``<folder name>-01.yaml``.

    Raises:
        SkeletonError: the folder already holds files, or its name makes no id.
    """
    folder = Path(name)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise SkeletonError(f"{folder} already exists and is not an empty folder; choose another name (nothing was written)")
    first = folder / f"{folder.name}-01.yaml"
    text = scenario_text(first.stem, first)
    return [_write_new(folder / "_defaults.yaml", DEFAULTS_TEMPLATE), _write_new(first, text)]


def cli_new(args: Any) -> int:
    """``recall-eval new scenario NAME`` / ``new suite NAME``: 0 written, 2 refused (nothing written)."""
    try:
        paths = [new_scenario(args.name)] if args.kind == "scenario" else new_suite(args.name)
    except SkeletonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {exc.filename or args.name}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {path}")
    target = paths[-1] if args.kind == "scenario" else Path(args.name)
    print(f"next: edit it, then `recall-eval validate {target}` and `recall-eval run --scenarios {target}`")
    return 0
