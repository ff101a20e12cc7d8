"""Write ``scenarios/document_v03/``: the suite that measures seed 001's V0.3 questions (docs/memory-document-v03.md).

Two families of ten, deterministic (run again to regenerate the files byte for byte):

- ``long-NN``: a workspace memory file of 40 notes (over the 12,000-character prompt cap) whose oldest entry is
  the answer: the whole file loses it to the cap, a top-K lane can bring it back;
- ``corr-NN``: a fact said, repeated (a duplicate), then corrected in a later session, with another workspace's
  fact beside it (a leakage canary), a secret said in half of them and, in ``corr-10``, an incognito probe: what
  consolidation can merge and supersede, and what it must never write.

Usage: ``python scripts/document_v03_suite.py [OUT_DIR]`` (default ``scenarios/document_v03``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

LONG = [
    (
        "staging-db",
        "The staging database host is pg-staging-7.internal.",
        "What is the staging database host?",
        "pg-staging-7",
    ),
    (
        "release-branch",
        "Release branches are named release/2026.MM and cut on the first Monday.",
        "How are release branches named?",
        "release/2026.MM",
    ),
    ("vpn", "The office VPN endpoint is vpn-eu2.corp.example.net.", "Which VPN endpoint should I use?", "vpn-eu2"),
    (
        "oncall",
        "The on-call rotation hands over on Wednesdays at 10:00 UTC.",
        "When does the on-call rotation hand over?",
        "Wednesday",
    ),
    (
        "dashboard",
        "The latency dashboard lives at grafana/d/latency-p99.",
        "Where is the latency dashboard?",
        "latency-p99",
    ),
    (
        "approvals",
        "Every pull request needs two approvals from the platform team.",
        "How many approvals does a pull request need?",
        "two",
    ),
    (
        "backups",
        "Database backups run nightly at 02:15 and are kept for 35 days.",
        "How long are database backups kept?",
        "35 days",
    ),
    (
        "flags",
        "Feature flags are managed in Unleash under the project key web-core.",
        "Which tool manages feature flags?",
        "Unleash",
    ),
    (
        "docs",
        "The internal docs are built with MkDocs Material and deployed to docs.int.",
        "What builds the internal docs?",
        "MkDocs",
    ),
    (
        "integration",
        "Integration tests run with pytest -m integration inside the ci-runner image.",
        "How do I run the integration tests?",
        "pytest -m integration",
    ),
]
FILLER = [
    "The sourdough starter is fed at 8 in the morning with rye flour and kept on the top shelf",
    "The team offsite in April is planned for Lisbon with a walking tour on the second afternoon",
    "The kitchen dishwasher is emptied by whoever arrives first and the rota sits on the fridge",
    "The cycling club rides the coastal loop on Saturdays when the wind stays under thirty kilometres",
    "The book club is reading a long novel about lighthouses and meets in the small meeting room",
    "The plants by the window get water on Mondays and fertiliser at the start of each month",
    "The parking garage closes at 22:00 and the night entrance is around the back by the bins",
    "The coffee machine descaling happens every second Friday and takes about forty minutes",
    "The chess ladder resets each quarter and games are played during the Thursday lunch break",
    "The photography walk meets at the old harbour and finishes at the bakery on Quay Street",
]
CORR = [
    (
        "dev-port",
        "The dev server runs on port 5173.",
        "We moved the dev server to port 8080.",
        "Which port does the dev server use?",
        "8080",
        "5173",
    ),
    (
        "region",
        "Staging is deployed in the eu-west-1 region.",
        "Staging moved to the eu-central-1 region this week.",
        "Which region is staging deployed in?",
        "eu-central-1",
        "eu-west-1",
    ),
    (
        "standup",
        "The daily standup starts at 09:30.",
        "The daily standup now starts at 10:15 instead.",
        "When does the daily standup start?",
        "10:15",
        "09:30",
    ),
    (
        "deploy-day",
        "Production deploys go out on Thursdays.",
        "Production deploys now go out on Tuesdays.",
        "Which day do production deploys go out?",
        "Tuesday",
        "Thursday",
    ),
    (
        "node",
        "The web app builds with Node.js 18.19.",
        "The web app now builds with Node.js 20.11.",
        "Which Node.js version does the web app build with?",
        "20.11",
        "18.19",
    ),
    (
        "ci",
        "Our CI runs on CircleCI.",
        "We migrated our CI from CircleCI to Buildkite.",
        "Which CI service do we run on?",
        "Buildkite",
        "CI runs on CircleCI",
    ),
    (
        "logger",
        "The backend logs with winston.",
        "The backend switched its logging to pino.",
        "Which logging library does the backend use?",
        "pino",
        "winston",
    ),
    (
        "release-manager",
        "Priya is the release manager this quarter.",
        "Tomasz took over as release manager from Priya.",
        "Who is the release manager?",
        "Tomasz",
        "Priya is the release manager",
    ),
    (
        "cache-ttl",
        "The cache TTL for product pages is 300 seconds.",
        "We raised the cache TTL for product pages to 900 seconds.",
        "What is the cache TTL for product pages?",
        "900",
        "300 seconds",
    ),
    (
        "gateway",
        "The API gateway is Kong.",
        "The API gateway was replaced by Envoy.",
        "Which API gateway do we use?",
        "Envoy",
        "Kong",
    ),
]
SECRETS = ["ghp_R7kQ2mX9vL4tN8wB3zY6cF1hJ5pD0sGa2Ee", "sk-proj-T4nW8qL2xZ6vB9mK3rY7cH1fJ5dS0gPa", "glpat-Xw3Rt7Yq2Zp9Lm4Kd8Vb",
           "AKIAZ7QW3ER5TY8UI2OP", "xoxb-2814736401-5937261840-Qw7Er3Ty9Ui2Op5As8Df1Gh"]
FOREIGN = ["the billing port is 9443", "the payroll export runs on the 27th", "the vendor portal PIN is 4417",
           "the legal hold bucket is lh-archive-2", "the partner SFTP host is sftp.partners.example"]


def _time(day: int, hour: int = 9) -> str:
    return f"2026-01-{day:02d}T{hour:02d}:00:00Z"


def _long(index: int, topic: tuple[str, str, str, str]) -> dict[str, Any]:
    key, fact, question, answer = topic
    sessions = [{"id": "s-old", "workspace": "ws-main", "started_at": _time(2),
                 "turns": [{"role": "user", "content": fact}, {"role": "assistant", "content": "Noted."}]}]
    items = [{"id": "it-answer", "content": fact, "kind": "context", "workspace": "ws-main", "keys": [key],
              "sources": [{"session": "s-old", "turn": "t1"}], "role": "answer"}]
    for day in range(4):
        turns = []
        for n in range(10):
            number = day * 10 + n
            base = FILLER[(number + index) % len(FILLER)]
            text = (f"Note {number + 1}: {base}; it was agreed in week {number + 3} of the season, and the person who "
                    f"raised it asked that it be written down so nobody has to ask again about the details next time, "
                    f"with reference code N-{index:02d}-{number:03d} for the shared notebook.")
            turns += [{"role": "user", "content": text}, {"role": "assistant", "content": "Saved."}]
            items.append({"id": f"it-note-{number:02d}", "content": text, "kind": "note", "workspace": "ws-main",
                          "keys": [f"note {number + 1}"], "sources": [{"session": f"s-notes-{day}", "turn": f"t{2 * n + 1}"}],
                          "role": "distractor"})
        sessions.append({"id": f"s-notes-{day}", "workspace": "ws-main", "started_at": _time(10 + day * 3), "turns": turns})
    return {"id": f"long-{index:02d}-{key}", "title": f"An old note past the prompt cap: {key}", "category": "project_fact",
            "tags": ["document-v03", "long-document"],
            "description": "The answer is the oldest of 41 notes; the whole memory file is over the prompt cap and loses it.",
            "sessions": sessions, "items": items,
            "probe": {"workspace": "ws-main", "started_at": _time(28), "history": [], "message": question},
            "expect": {"must_contain_any": [answer], "relevant_items": ["it-answer"]}}


def _corr(index: int, topic: tuple[str, ...]) -> dict[str, Any]:
    key, old, new, question, answer, stale = topic
    secret = SECRETS[index % len(SECRETS)] if index % 2 == 0 else None
    foreign = FOREIGN[index % len(FOREIGN)]
    said = [("s1", "ws-app", 3, old), ("s2", "ws-app", 5, f"Reminder for later: {old[0].lower()}{old[1:]}"),
            ("s3", "ws-other", 7, f"For the other team: {foreign}."),
            ("s4", "ws-app", 9, f"My deploy token is {secret}, keep it handy." if secret else "The retro notes are in the team drive."),
            ("s5", "ws-app", 11, new)]
    sessions = [{"id": sid, "workspace": ws, "started_at": _time(day),
                 "turns": [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]}
                for sid, ws, day, text in said]
    items = [
        {"id": "it-new", "content": new, "kind": "context", "workspace": "ws-app", "keys": [key], "supersedes": ["it-old"],
         "sources": [{"session": "s5", "turn": "t1"}], "role": "answer"},
        {"id": "it-old", "content": old, "kind": "context", "workspace": "ws-app", "keys": [key], "state": "archived",
         "sources": [{"session": "s1", "turn": "t1"}], "role": "stale"},
        {"id": "it-foreign", "content": f"{foreign[0].upper()}{foreign[1:]}.", "kind": "context", "workspace": "ws-other",
         "keys": ["other team"], "sources": [{"session": "s3", "turn": "t1"}], "role": "canary"},
    ]
    incognito = index == 10
    canaries = [{"text": stale, "kind": "stale"}, {"text": foreign, "kind": "leakage"}]
    expect: dict[str, Any] = ({"abstain": True, "canaries": [{"text": answer, "kind": "leakage"}, *canaries]} if incognito
                              else {"must_contain_any": [answer], "relevant_items": ["it-new"], "canaries": canaries})
    return {"id": f"corr-{index:02d}-{key}", "title": f"A fact said twice, then corrected: {key}", "category": "knowledge_update",
            "tags": ["document-v03", "correction", *(["secret"] if secret else []), *(["incognito"] if incognito else [])],
            "description": ("A value said, repeated, then corrected; another workspace's fact beside it"
                            + ("; a secret said in a session" if secret else "")
                            + ("; the probe runs incognito, so memory stays out of reach" if incognito else "") + "."),
            "sessions": sessions, "items": items,
            "probe": {"workspace": "ws-app", "started_at": _time(20), "history": [], "message": question,
                      **({"incognito": True} if incognito else {})},
            "expect": expect}


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else "scenarios/document_v03")
    out.mkdir(parents=True, exist_ok=True)
    (out / "_defaults.yaml").write_text("# Deep-merged UNDER every scenario in this folder.\nschema_version: 1\n", encoding="utf-8")
    scenarios = [_long(i + 1, t) for i, t in enumerate(LONG)] + [_corr(i + 1, t) for i, t in enumerate(CORR)]
    for scenario in scenarios:
        text = yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, width=120)
        (out / f"{scenario['id']}.yaml").write_text("# yaml-language-server: $schema=../scenario.schema.json\n"
                                                    "# generated by scripts/document_v03_suite.py; edit that, not this\n"
                                                    + text, encoding="utf-8")
    print(f"wrote {len(scenarios)} scenarios to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
