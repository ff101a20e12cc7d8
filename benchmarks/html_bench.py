"""Render the HTML report for ~10,000 fake samples and print time and size.

Run: ``python benchmarks/html_bench.py [n_scenarios] [epochs]`` (defaults 1667 x 1 epoch x 3 arms x 2 models).
Timed with the cyclic GC paused, as ``build_report`` runs it.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.report.build import _gc_paused  # noqa: E402
from harness.report.html import render_html  # noqa: E402
from tests.report.report_fixtures import make_report_data  # noqa: E402


def main() -> None:
    n_scenarios = int(sys.argv[1]) if len(sys.argv) > 1 else 1667
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    summary, samples = make_report_data(
        n_scenarios=n_scenarios, models=("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku"), epochs=epochs
    )
    render_html(summary, samples[:10])  # warm the template cache
    timings, cpu = [], []
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.process_time()
        with _gc_paused():
            page = render_html(summary, samples)
        timings.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    size = len(page.encode("utf-8"))
    blob = re.search(r"<script type=\"application/json\" id=\"transcript-data\"[^>]*>(.*?)</script>", page, re.S)
    blob_size = len(blob.group(1).encode("utf-8")) if blob else 0
    print(f"samples: {len(samples)}")
    print(f"render_html wall: best {min(timings):.3f} s, worst {max(timings):.3f} s (3 runs)")
    print(f"render_html CPU:  best {min(cpu):.3f} s, worst {max(cpu):.3f} s (other load on the machine skews wall time)")
    print(f"page size: {size / 1e6:.2f} MB ({size / max(len(samples), 1):.0f} bytes/sample)")
    encoding = re.search(r'id="transcript-data" data-encoding="([^"]+)"', page)
    print(f"  of which transcript data: {blob_size / 1e6:.2f} MB ({encoding.group(1) if encoding else '?'}),"
          f" the rest: {(size - blob_size) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
