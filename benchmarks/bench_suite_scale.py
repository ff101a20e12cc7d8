"""A LoCoMo-sized suite: validate, ``run --filter`` of one probe, and ``report`` of 6,000 samples; print the figures.

Generates, in a temporary folder, 10 conversations x 200 probes (about 20k
tokens of history each: 25 sessions of 24 turns between two named speakers,
200 extracted items with keys, sources, dates and a few revisions; probes in
the five LoCoMo categories the suite declares, adversarial ones abstaining with
a someone-else canary), written two ways:

- ``conversation``: one conversation file per conversation (the new format);
- ``one-story``: every probe its own file repeating its conversation (the
  only layout before issue 11), at ``--story-probes`` probes per conversation,
  extrapolated linearly to the full 2,000 where noted; written without issue
  11's new fields (speakers in the content, built-in categories), so an older
  checkout reads it too.

Each command runs as its own process (``python -m harness.cli ...``), timed
wall-clock, with its peak RSS read from ``wait4``. ``report`` reads a
synthesized ``results.jsonl`` (2,000 probes x 3 arms, transcripts of a few kB,
not the 20k-token pasted history a real ``full_history`` sample carries).
``--harness DIR`` runs the one-story measurements and the 6,000-sample
``report`` with another checkout too (its ``.venv`` when it has one; e.g.
``/work/main``: the figures before a change).

Targets (issue 11): validate < 3 s and < 400 MB; run --filter < 10 s; report < 5 s.

Usage:
    python benchmarks/bench_suite_scale.py [--conversations 10] [--probes 200] [--story-probes 20] [--harness /work/main] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CATEGORIES = {
    "single_hop": "Answered by one fact from one session.",
    "multi_hop": "Needs facts from several sessions.",
    "temporal": "Asks when something happened.",
    "open_domain": "Needs the conversation plus world knowledge.",
    "adversarial": "Asks about something said of someone else: the right answer is that it was not said.",
}
SYSTEM_PROMPT = "You answer questions about a long conversation between two friends, using what you remember of it."
ARMS = ("history_only", "recall", "full_history")
SESSIONS, TURNS, ITEMS_PER_SESSION = 25, 24, 8
DAY = 86_400_000
START = 1_672_531_200_000  # 2023-01-01

NAMES = ["Caroline", "Melanie", "Jon", "Gina", "John", "Maria", "Joanna", "Nate", "Tim", "Audrey", "Andrew", "Evan",
         "Sam", "Calvin", "Dave", "Deborah", "Jolene", "James", "Joe", "Lara"]
PLACES = ["Lisbon", "Boston", "Kyoto", "the lake house", "Denver", "the pottery studio", "Oslo", "the farmers market",
          "Madrid", "the climbing gym", "Seattle", "the art fair", "Nairobi", "the library", "Austin", "the beach"]
THINGS = ["a golden retriever", "a pottery class", "a marathon", "a new job", "a charity run", "a painting", "a guitar",
          "a road trip", "a book club", "a camping trip", "an adoption agency", "a support group", "a violin",
          "a bakery", "a garden", "a dance recital"]
VERBS = ["started", "finished", "signed up for", "talked about", "planned", "gave up", "went back to", "celebrated"]
FILLER = ("honestly it was one of those weeks where everything happened at once and I barely had time to think about "
          "anything else but I am glad I did it because it reminded me why I care about the people around me").split()


def _sentence(rng: random.Random, speaker: str) -> tuple[str, str, str]:
    thing, place, verb = rng.choice(THINGS), rng.choice(PLACES), rng.choice(VERBS)
    filler = " ".join(rng.sample(FILLER, rng.randint(10, 22)))
    return f"{speaker} here: I {verb} {thing} in {place} last week, {filler}.", thing, place


def _conversation(rng: random.Random, index: int) -> dict[str, Any]:
    """One conversation's shared part as plain data (sessions, items) plus the facts probes ask about."""
    a, b = NAMES[(2 * index) % len(NAMES)], NAMES[(2 * index + 1) % len(NAMES)]
    sessions, items, facts = [], [], []
    for s in range(SESSIONS):
        at = START + (s * 9 + index) * DAY
        turns = []
        said = []
        for t in range(TURNS):
            speaker = a if t % 2 == 0 else b
            text, thing, place = _sentence(rng, speaker)
            turns.append({"role": "user" if t % 2 == 0 else "assistant", "speaker": speaker, "content": text})
            said.append((t + 1, speaker, thing, place))
        sessions.append({"id": f"s{s + 1}", "started_at": at, "turns": turns})
        for k, (turn, speaker, thing, place) in enumerate(rng.sample(said, ITEMS_PER_SESSION)):
            item_id = f"it-{s + 1}-{k + 1}"
            item: dict[str, Any] = {
                "id": item_id, "content": f"{speaker} {rng.choice(VERBS)} {thing} in {place}.", "kind": "context",
                "temporal_type": "point", "event_started_at": at - rng.randint(1, 8) * DAY, "observed_at": at + 3_600_000,
                "keys": [{"key": speaker.lower(), "type": "entity"}, {"key": place.lower(), "type": "entity"},
                         *thing.split()[-1:]],
                "sources": [{"session": f"s{s + 1}", "turn": f"t{turn}"}],
            }
            if k == 0 and s > 0:
                item["revisions"] = [{"content": f"{speaker} thought about {thing}.", "at": at - DAY}]
            items.append(item)
            facts.append((item_id, speaker, thing, place, at))
    return {"speakers": (a, b), "sessions": sessions, "items": items, "facts": facts,
            "probe_at": START + (SESSIONS * 9 + index + 5) * DAY}


def _probe(rng: random.Random, conv: dict[str, Any], n: int) -> dict[str, Any]:
    category = list(CATEGORIES)[n % len(CATEGORIES)]
    item_id, speaker, thing, place, at = rng.choice(conv["facts"])
    other = conv["speakers"][1] if speaker == conv["speakers"][0] else conv["speakers"][0]
    word = thing.split()[-1]
    probe = {"started_at": conv["probe_at"], "message": f"Where did {speaker} do {thing}? ({n})"}
    if category == "adversarial":
        expect = {"abstain": True, "canaries": [{"text": place, "kind": "someone_else"}], "relevant_items": [item_id]}
        probe["message"] = f"Where did {other} do {thing}? ({n})"
    elif category == "multi_hop":
        second = rng.choice(conv["facts"])
        expect = {"must_contain_groups": [[place], [second[3]]], "relevant_items": sorted({item_id, second[0]}),
                  "f1_reference": f"{place} and {second[3]}"}
    elif category == "temporal":
        expect = {"must_contain_any": [time.strftime("%Y", time.gmtime(at / 1000))], "relevant_items": [item_id],
                  "f1_reference": time.strftime("%d %B %Y", time.gmtime(at / 1000))}
    else:
        expect = {"must_contain_any": [place, place.removeprefix("the ")], "relevant_items": [item_id], "f1_reference": place}
    return {"id": f"q{n:03d}", "category": category, "tags": [word], "probe": probe, "expect": expect}


LEGACY_CATEGORY = {"single_hop": "project_fact", "multi_hop": "project_fact", "temporal": "temporal",
                   "open_domain": "project_fact", "adversarial": "abstention"}


def _legacy_sessions(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sessions without issue 11's ``speaker`` (the name moves into the content), so an older harness reads them."""
    return [{**s, "turns": [{"role": t["role"], "content": f"{t['speaker']}: {t['content']}"} for t in s["turns"]]} for s in sessions]


def _legacy_probe(entry: dict[str, Any]) -> dict[str, Any]:
    """A probe in the format before issue 11: built-in category, no groups, F1 reference or someone-else canary."""
    expect = dict(entry["expect"])
    expect.pop("f1_reference", None)
    if "must_contain_groups" in expect:
        expect["must_contain_all"] = [group[0] for group in expect.pop("must_contain_groups")]
    expect["canaries"] = [{**c, "kind": "invented"} for c in expect.get("canaries", [])]
    return {**entry, "category": LEGACY_CATEGORY[entry["category"]], "expect": expect}


def _dump(data: Any) -> str:
    import yaml

    return yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False, allow_unicode=True, width=1_000_000)


def generate(target: Path, conversations: int, probes: int, story_probes: int, seed: int = 0, json_syntax: bool = False) -> dict[str, Any]:
    """Write both layouts under ``target``; returns what was written."""
    from harness.importers.output import dump_yaml

    rng = random.Random(seed)
    conv_dir, story_dir = target / "conversation", target / "one-story"
    conv_dir.mkdir(parents=True)
    story_dir.mkdir(parents=True)
    (conv_dir / "_defaults.yaml").write_text(_dump({"system_prompt": SYSTEM_PROMPT, "categories": CATEGORIES}), encoding="utf-8")
    tokens, ids = 0, []
    for c in range(conversations):
        conv = _conversation(rng, c)
        entries = [_probe(rng, conv, n) for n in range(1, probes + 1)]
        conv_id = f"conv-{c + 1:02d}"
        shared = {"id": conv_id, "title": f"{conv['speakers'][0]} and {conv['speakers'][1]}",
                  "description": "Two friends talk over months; questions about what they said.",
                  "tags": ["locomo-like"], "sessions": conv["sessions"], "items": conv["items"]}
        conv_text = dump_yaml({**shared, "probes": entries}) if json_syntax else _dump({**shared, "probes": entries})
        (conv_dir / f"{conv_id}.yaml").write_text(conv_text, encoding="utf-8")
        tokens += sum(len(t["content"]) for s in conv["sessions"] for t in s["turns"]) // 4
        ids += [f"{conv_id}/{e['id']}" for e in entries]
        body = _dump({"sessions": _legacy_sessions(conv["sessions"]), "items": conv["items"]})
        for entry in map(_legacy_probe, entries[:story_probes]):
            head = {"id": f"{conv_id}-{entry['id']}", "title": f"{shared['title']} / {entry['id']}", "category": entry["category"],
                    "description": shared["description"], "tags": ["locomo-like", *entry["tags"]]}
            tail = {"probe": entry["probe"], "expect": entry["expect"]}
            (story_dir / f"{conv_id}-{entry['id']}.yaml").write_text(_dump(head) + body + _dump(tail), encoding="utf-8")
    size = lambda folder: sum(p.stat().st_size for p in folder.glob("*.yaml"))  # noqa: E731
    return {"conv_dir": conv_dir, "story_dir": story_dir, "ids": ids, "tokens_per_conversation": tokens // conversations,
            "conv_mb": size(conv_dir) / 1e6, "story_mb": size(story_dir) / 1e6,
            "story_files": len(list(story_dir.glob("*.yaml")))}


def _tree_rss_mb(root: int) -> float:
    """The summed resident memory of ``root`` and every process below it, from /proc (0.0 where there is none)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        parents[int(entry)], rss[int(entry)] = int(fields[1]), int(fields[21])
    tree, frontier = {root}, [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier and pid not in tree]
        tree.update(frontier)
    return sum(rss.get(pid, 0) for pid in tree) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _command(args: list[str], harness: Path | None = None, cwd: Path | None = None) -> tuple[float, float, float, int, str]:
    """Run ``python -m harness.cli ARGS``; returns (wall s, CPU s, peak RSS MB, exit code, last output line).

    CPU (user + system of the process and its worker processes) is printed beside wall time: on a machine
    shared with other jobs the wall time measures the neighbours too. The peak is the larger of the largest
    single process's (``wait4``) and the process tree's summed RSS, sampled every 0.1 s: with worker processes
    (``validate``, ``import``, ``run --workers``) that sum is what the machine must hold.
    """
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    python = sys.executable
    if harness is not None:  # its own virtualenv (an editable install there points at it), else its folder on the path
        own = harness / ".venv" / "bin" / "python"
        python = str(own) if own.exists() else python
        env["PYTHONPATH"] = str(harness)
    start = time.perf_counter()
    proc = subprocess.Popen([python, "-m", "harness.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            cwd=cwd or tempfile.gettempdir())  # not this checkout: `-m` puts the working folder first on the path
    tree_peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            tree_peak[0] = max(tree_peak[0], _tree_rss_mb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    if os.path.isdir("/proc"):
        sampler.start()
    output = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    lines = [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    return wall, usage.ru_utime + usage.ru_stime, max(usage.ru_maxrss / 1024, tree_peak[0]), proc.returncode, lines[-1] if lines else ""


def synthesize_results(run_dir: Path, suite: Path, ids: list[str]) -> int:
    """``run.json`` + ``results.jsonl`` for every probe x 3 arms, scenario hashes included, as a run would write them."""
    from harness.records import ModelCallLog, RunManifest, SampleRecord, ToolCallLog, sample_id
    from harness.scenarios import load_scenarios, scenario_hash

    rng = random.Random(1)
    scenarios = load_scenarios([suite])
    run_dir.mkdir(parents=True)
    model = "offline/reference"
    manifest = RunManifest(run_id=run_dir.name, harness_version="bench", status="complete", started_at="2026-03-01T00:00:00Z",
                           finished_at="2026-03-01T01:00:00Z", models=[model], arms=list(ARMS), epochs=1, seed=0,
                           scenario_paths=[str(suite)], scenario_ids=sorted(ids), suite_hash="0" * 64,
                           sample_count=len(ids) * len(ARMS))
    (run_dir / "run.json").write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    count = 0
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as out:
        for sc in scenarios:
            digest = scenario_hash(sc)
            good = (sc.expect.must_contain_any or [g[0] for g in sc.expect.must_contain_groups] or ["nothing"])[0]
            for arm in ARMS:
                right = rng.random() < {"history_only": 0.3, "recall": 0.7, "full_history": 0.8}[arm]
                answer = ("I don't recall that being said." if sc.expect.abstain else f"It was {good}.") if right else "I think it was Paris."
                calls = []
                messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": sc.probe.message}]
                if arm == "recall":
                    item = sc.items[rng.randrange(len(sc.items))]
                    payload = json.dumps({"results": [{"itemId": item.id, "content": item.content, "kind": "context"}] * 3})
                    calls.append(ToolCallLog(round=0, call_id="c0", name="memory_search", arguments='{"query":"where"}', status="ok",
                                             result_text=payload, result_chars=len(payload), result_tokens=len(payload) // 4,
                                             disclosed_item_ids=[item.id], storage_read=True, elapsed_s=0.002))
                    messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function",
                                  "function": {"name": "memory_search", "arguments": '{"query":"where"}'}}]},
                                 {"role": "tool", "tool_call_id": "c0", "content": payload}]
                messages.append({"role": "assistant", "content": answer})
                record = SampleRecord(
                    sample_id=sample_id(sc.id, arm, model, 0), scenario_id=sc.id, scenario_hash=digest, category=sc.category,
                    arm=arm, model=model, epoch=0, seed=0, status="ok", final_answer=answer, stop_reason="final_answer",
                    tools_offered=["memory_search", "memory_get"] if arm == "recall" else [], messages=messages,
                    model_calls=[ModelCallLog(round=0, latency_s=0.5, prompt_tokens=900, completion_tokens=20,
                                              usage_source="response", cost_usd=0.0)],
                    tool_calls=calls, started_at="2026-03-01T00:00:00Z", wall_time_s=0.5)
                out.write(record.model_dump_json() + "\n")
                count += 1
    return count


def _row(name: str, wall: float, cpu: float, rss: float, code: int, target: str = "", note: str = "") -> None:
    print(f"  {name:44} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak {rss:5.0f} MB  exit {code}  {target}{note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--story-probes", type=int, default=20, help="probes per conversation written one story per file")
    parser.add_argument("--harness", type=Path, help="another checkout whose harness also runs the one-story measurements")
    parser.add_argument("--keep", type=Path, help="write the suites here and keep them")
    parser.add_argument("--json-syntax", action="store_true",
                        help="write the conversation files in JSON syntax as the importers do (the loader's JSON fast path)")
    args = parser.parse_args()
    target = (args.keep or Path(tempfile.mkdtemp(prefix="suite-scale-"))).resolve()
    try:
        t0 = time.perf_counter()
        made = generate(target, args.conversations, args.probes, args.story_probes, json_syntax=args.json_syntax)
        total = args.conversations * args.probes
        print(f"generated in {time.perf_counter() - t0:.1f} s: {args.conversations} conversations x {args.probes} probes, "
              f"~{made['tokens_per_conversation']:,} tokens of history each")
        print(f"  conversation layout: {args.conversations} files, {made['conv_mb']:.1f} MB")
        print(f"  one-story layout:    {made['story_files']} files ({args.story_probes} per conversation), {made['story_mb']:.1f} MB "
              f"(x{total / max(made['story_files'], 1):.0f} for the full {total}: ~{made['story_mb'] * total / max(made['story_files'], 1):.0f} MB)")
        conv, story = made["conv_dir"], made["story_dir"]
        probe = made["ids"][len(made["ids"]) // 2]
        print("\nconversation layout (this checkout):")
        _row("validate (whole suite)", *_command(["validate", str(conv)])[:4], "[target < 3 s, < 400 MB]")
        run = target / "run-one"
        wall, cpu, rss, code, _ = _command(["run", "--scenarios", str(conv), "--filter", probe, "--model", "offline/reference",
                                            "--out", str(run), "--no-progress", "--no-cache"])
        _row(f"run --filter {probe} (3 arms, offline)", wall, cpu, rss, code, "[target < 10 s]")
        _row("  for scale: --help (python + CLI start)", *_command(["--help"])[:4])
        results = target / "run-all"
        samples = synthesize_results(results, conv, made["ids"])
        _row(f"report ({samples} samples)", *_command(["report", str(results)])[:4], "[target < 5 s]")
        if args.harness:  # the same report with the other checkout, for before/after (its summary.json replaced)
            _row(f"  same report, {args.harness}", *_command(["report", str(results)], args.harness)[:4])
        scale = total / max(made["story_files"], 1)
        checkouts = [("this checkout", None)] + ([(str(args.harness), args.harness)] if args.harness else [])
        for label, harness in checkouts:
            print(f"\none-story layout ({made['story_files']} files; {label}):")
            wall, cpu, rss, code, last = _command(["validate", str(story)], harness)
            _row("validate (whole suite)", wall, cpu, rss, code, note=f"  -> ~{cpu * scale:.0f} s CPU for {total} files (linear)")
            story_probe = f"{made['ids'][0].split('/')[0]}-{made['ids'][0].split('/')[1]}"
            run = target / f"run-story-{len(label)}"
            wall, cpu, rss, code, last = _command(["run", "--scenarios", str(story), "--filter", story_probe, "--model", "offline/reference",
                                                   "--out", str(run), "--no-progress", "--no-cache"], harness)
            _row(f"run --filter {story_probe}", wall, cpu, rss, code, note=f"  ({last[:60]})" if code else "")
    finally:
        if not args.keep:
            shutil.rmtree(target, ignore_errors=True)


if __name__ == "__main__":
    main()
