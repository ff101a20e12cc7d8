"""The imported suites load and validate with 0 errors through the real loader (``harness.scenarios.load_suite``)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from harness.importers.output import dump_yaml
from harness.scenarios import load_suite
from tests.harness.importer_fixtures import imported, read_yaml


def _one_story_files(out: Path, target: Path) -> None:
    """Each probe of each conversation file written as today's one-story scenario (the shared part plus the probe)."""
    target.mkdir()
    (target / "_defaults.yaml").write_text((out / "_defaults.yaml").read_text())
    for path in sorted(out.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        conv = read_yaml(path)
        for probe in conv.pop("probes"):
            story: dict[str, Any] = copy.deepcopy(conv)
            story["id"] = f"{conv['id']}.{probe['id']}"
            roles = probe.get("item_roles", {})
            for item in story["items"]:
                item["role"] = roles.get(item["id"], item["role"])
            story.update(category=probe["category"], probe=probe["probe"], expect=probe["expect"])
            (target / f"{story['id']}.yaml").write_text(dump_yaml(story))


@pytest.mark.parametrize("kind", ["locomo", "longmemeval"])
def test_every_imported_probe_validates_with_0_errors_as_a_scenario(tmp_path: Path, kind: str) -> None:
    out, _ = imported(kind, tmp_path)
    _one_story_files(out, tmp_path / "stories")
    suite = load_suite([tmp_path / "stories"])
    assert [str(p) for p in suite.errors] == []
    assert len(suite.scenarios) == sum(len(read_yaml(p)["probes"]) for p in out.glob("[!_]*.yaml"))
    for problem in suite.problems:
        print(problem)
