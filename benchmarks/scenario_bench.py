"""Time loading and validating a large suite: 1,000 scenario files.

Copies the shipped scenarios (with their ``_defaults.yaml``) into a temporary
folder under new ids until there are ``--count`` files, then times
``load_suite`` (discovery, YAML parsing, defaults merge, models, every
cross-field and store-rule check), plus the parts on their own.
Target: the whole load under 2 s for 1,000 files.

Usage:
    python benchmarks/scenario_bench.py [--count 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from harness.scenarios import load_suite, scenario_hash
from harness.scenarios.discovery import discover
from harness.scenarios.documents import _Loader

ROOT = Path(__file__).resolve().parents[1]
_ID_LINE = re.compile(r"^id:\s*(\S+)\s*$", re.MULTILINE)


def _make_suite(target: Path, count: int) -> int:
    """Write ``count`` scenario files under ``target``; returns how many distinct sources were copied."""
    sources = [p for p in discover([ROOT / "scenarios"])]
    for defaults in (ROOT / "scenarios").rglob("_defaults.yaml"):
        folder = target / defaults.parent.relative_to(ROOT / "scenarios")
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(defaults, folder / defaults.name)
    for n in range(count):
        source = sources[n % len(sources)]
        text = source.read_text(encoding="utf-8")
        text = _ID_LINE.sub(lambda m: f"id: {m.group(1)}-copy{n:04d}", text, count=1)  # noqa: B023 - re.sub calls it at once
        folder = target / source.parent.relative_to(ROOT / "scenarios")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{source.stem}-copy{n:04d}.yaml").write_text(text, encoding="utf-8")
    return len(sources)


def _time(func, repeat: int) -> float:
    """Median wall-clock seconds over ``repeat`` runs."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def _cpu(func, repeat: int) -> float:
    """Median CPU seconds of this process: steadier than wall time on a busy machine."""
    runs = []
    for _ in range(repeat):
        start = time.process_time()
        func()
        runs.append(time.process_time() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite_dir = Path(tmp)
        distinct = _make_suite(suite_dir, args.count)
        files = discover([suite_dir])
        texts = [p.read_text(encoding="utf-8") for p in files]

        def parse_only() -> None:
            for text in texts:
                loader = _Loader(text)
                try:
                    loader.construct_document(loader.get_single_node())
                finally:
                    loader.dispose()

        suite = load_suite([suite_dir])
        assert not suite.errors, [str(p) for p in suite.errors[:5]]
        total = _time(lambda: load_suite([suite_dir]), args.repeat)
        total_cpu = _cpu(lambda: load_suite([suite_dir]), args.repeat)
        discovery = _time(lambda: discover([suite_dir]), args.repeat)
        parsing = _time(parse_only, args.repeat)
        hashing = _time(lambda: [scenario_hash(s) for s in suite.scenarios], args.repeat)
        size = sum(len(t) for t in texts)
    print(f"files: {len(files)} (copies of {distinct} shipped scenarios, {size / 1e6:.1f} MB of YAML)")
    print(f"scenarios loaded: {len(suite.scenarios)}, problems: {len(suite.problems)}")
    print(f"load_suite (discover + parse + merge + models + checks): {total:.3f} s wall, {total_cpu:.3f} s CPU  "
          f"({total / len(files) * 1e3:.2f} ms/file wall)")
    print(f"  discovery alone:   {discovery:.3f} s")
    print(f"  YAML parse alone (PyYAML's constructor, for comparison): {parsing:.3f} s  (libyaml: {_Loader is getattr(yaml, 'CSafeLoader', None)})")
    print(f"scenario_hash of all: {hashing:.3f} s")
    print(f"target < 2 s: {'met' if total < 2 else 'MISSED'} (wall), {'met' if total_cpu < 2 else 'MISSED'} (CPU)")


if __name__ == "__main__":
    main()
