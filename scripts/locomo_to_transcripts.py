"""A LoCoMo-shaped file as logged traffic: a transcript JSONL and a memory store of its observations.

For issue 27's closing figure: a shadow run over real-shaped conversations
where the store is the observations LoCoMo extracted. Each LoCoMo conversation
becomes one workspace (its ``sample_id``), each of its sessions one logged
session (``<sample>-session_<N>``) whose turns are messages, ``speaker_a`` as
the user and ``speaker_b`` as the assistant (the name before the text, as
``recall-eval import locomo`` shows it), 30 seconds apart from the session's
date. Each observation becomes a workspace item of that conversation, created
and observed at the time of its latest evidence turn, so a probe (a session's
first message) never finds the facts of its own or any later session.

The sessions, turns and observations are read through
``harness.importers.locomo.convert_sample``: the same repairs and drops as
``recall-eval import locomo`` (its fault lines are printed).

Usage:
    python scripts/locomo_to_transcripts.py locomo10.json OUT
    recall-eval import transcripts OUT/transcripts.jsonl SUITE
    recall-eval run --scenarios SUITE --store OUT/store.sqlite --arms history_only recall ...

Prints the figures: conversations, sessions, messages, probes the import
will make (each conversation's sessions after its first) and items.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

from harness.importers import FaultLog
from harness.importers.jsonstream import iter_array
from harness.importers.locomo import convert_sample
from harness.scenarios.field_types import to_millis
from memory_tools import ItemInput, KeyInput, MemoryItemSource, MemoryItemStore, ScopeType

TURN_GAP_MS = 30_000
"""Between two logged turns of a session (LoCoMo gives only the session's date)."""


def _iso(millis: int) -> str:
    return dt.datetime.fromtimestamp(millis / 1000, tz=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def convert(source: Path, out: Path) -> dict[str, int]:
    """Write ``out/transcripts.jsonl`` and ``out/store.sqlite`` from the LoCoMo-shaped ``source``; the figures."""
    out.mkdir(parents=True, exist_ok=True)
    store_path = out / "store.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store_path}{suffix}").unlink(missing_ok=True)
    faults = FaultLog()
    figures = {"conversations": 0, "sessions": 0, "messages": 0, "probes": 0, "items": 0}
    with open(out / "transcripts.jsonl", "w", encoding="utf-8") as lines, MemoryItemStore(str(store_path)) as store:
        for index, sample in enumerate(iter_array(source)):
            data = convert_sample(sample, index, faults, set())
            if data is None:
                continue
            workspace = data["id"]
            turn_time: dict[tuple[str, str], int] = {}
            for session in data["sessions"]:
                start = to_millis(session["started_at"])
                session_id = f"{workspace}-{session['id']}"
                for position, turn in enumerate(session["turns"]):
                    at = start + position * TURN_GAP_MS
                    turn_time[(session["id"], turn["id"])] = at
                    text = f"{turn['speaker']}: {turn['content']}" if turn.get("speaker") else turn["content"]
                    lines.write(json.dumps({"session_id": session_id, "workspace": workspace, "role": turn["role"],
                                            "content": text, "timestamp": _iso(at)}, ensure_ascii=False) + "\n")
                    figures["messages"] += 1
            items = []
            for item in data["items"]:
                at = max(turn_time[(s["session"], s["turn"])] for s in item["sources"])
                keys = tuple(KeyInput(k) if isinstance(k, str) else KeyInput(k["key"]) for k in item["keys"])
                sources = tuple(MemoryItemSource(f"{workspace}-{s['session']}", f"{workspace}-{s['session']}/run",
                                                 s["turn"], f"{workspace}-{s['session']}/{s['turn']}")
                                for s in item["sources"])
                items.append(ItemInput(content=item["content"], kind=item["kind"], keys=keys, sources=sources,
                                       scope_type=ScopeType.WORKSPACE, scope_key=workspace, observed_at=at,
                                       item_id=f"{workspace}-{item['id']}", now=at))
            store.bulk_create(items)
            figures["conversations"] += 1
            figures["sessions"] += len(data["sessions"])
            figures["probes"] += max(len(data["sessions"]) - 1, 0)
            figures["items"] += len(items)
    for line in faults.lines():
        print(line, file=sys.stderr)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a locomo10.json-shaped file")
    parser.add_argument("out", type=Path, help="folder for transcripts.jsonl and store.sqlite")
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(f"error: {args.source}: no such file", file=sys.stderr)
        return 2
    figures = convert(args.source, args.out)
    print(f"{figures['conversations']} conversations, {figures['sessions']} sessions, {figures['messages']} messages "
          f"-> {figures['probes']} probes (sessions after each conversation's first), {figures['items']} items "
          f"in {args.out / 'store.sqlite'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
