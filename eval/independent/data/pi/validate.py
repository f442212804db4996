#!/usr/bin/env python3
"""Validate history.jsonl and probes.json in this directory."""
import json, re, sys
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECTS = {"kilnctl": "kiln", "crumbcast": "crumb", "rotaboard": "rota"}
KINDS = {"current", "stable", "retraction", "trap", "secret", "other_project"}
TARGET_KINDS = {"current": 25, "stable": 22, "retraction": 6, "trap": 6, "secret": 4, "other_project": 7}
errors = []

def err(msg):
    errors.append(msg)

# ---------------------------------------------------------------- history
rows = []
with open(HERE / "history.jsonl", encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        if not line.strip():
            err(f"history line {n}: blank line"); continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as e:
            err(f"history line {n}: bad JSON ({e})"); continue
        keys = {"project", "session", "ts", "user", "assistant", "request_id"}
        if set(r) != keys:
            err(f"history line {n}: keys {sorted(r)} != {sorted(keys)}")
            continue
        rows.append((n, r))

if not 190 <= len(rows) <= 220:
    err(f"history has {len(rows)} turns, expected 190-220")

prev_ts = None
req_ids = set()
session_project = {}
session_turns = Counter()
session_order = []
text_by_project = defaultdict(list)
for i, (n, r) in enumerate(rows, 1):
    if r["project"] not in PROJECTS:
        err(f"line {n}: unknown project {r['project']}")
        continue
    m = re.fullmatch(r"([a-z]+)-(\d{2})", r["session"])
    if not m or m.group(1) != PROJECTS[r["project"]]:
        err(f"line {n}: session {r['session']} doesn't match project {r['project']}")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", r["ts"]):
        err(f"line {n}: ts not ISO UTC with Z: {r['ts']}")
        continue
    ts = datetime.strptime(r["ts"], "%Y-%m-%dT%H:%M:%SZ")
    if prev_ts and ts <= prev_ts:
        err(f"line {n}: ts {r['ts']} not after previous")
    prev_ts = ts
    if r["request_id"] != f"pi-{i:04d}":
        err(f"line {n}: request_id {r['request_id']} expected pi-{i:04d}")
    if r["request_id"] in req_ids:
        err(f"line {n}: duplicate request_id")
    req_ids.add(r["request_id"])
    for k in ("user", "assistant"):
        if not isinstance(r[k], str) or len(r[k].strip()) < 20:
            err(f"line {n}: {k} too short/empty")
    s = r["session"]
    if s in session_project and session_project[s] != r["project"]:
        err(f"line {n}: session {s} spans projects")
    session_project[s] = r["project"]
    if not session_order or session_order[-1] != s:
        if s in session_order:
            err(f"line {n}: session {s} is not contiguous")
        session_order.append(s)
    session_turns[s] += 1
    text_by_project[r["project"]].append(r["user"] + "\n" + r["assistant"])

for s, c in session_turns.items():
    if not 3 <= c <= 7:
        err(f"session {s} has {c} turns (expected 3-7)")

# per-project session numbers must be 01..N in chronological order
for p, pre in PROJECTS.items():
    nums = [int(s.split("-")[1]) for s in session_order if session_project[s] == p]
    if nums != list(range(1, len(nums) + 1)):
        err(f"{p}: session numbers not sequential: {nums}")

# projects must interleave (no project owns more than 3 sessions in a row)
run, last = 0, None
for s in session_order:
    p = session_project[s]
    run = run + 1 if p == last else 1
    last = p
    if run > 3:
        err(f"project {p} has >3 consecutive sessions around {s}")

corpus = {p: "\n".join(t) for p, t in text_by_project.items()}
all_text = "\n".join(corpus.values())

# ---------------------------------------------------------------- probes
probes = json.loads((HERE / "probes.json").read_text(encoding="utf-8"))
if not isinstance(probes, list) or len(probes) != 70:
    err(f"probes.json must be a list of 70 (got {len(probes) if isinstance(probes, list) else type(probes)})")
ids = set()
kinds = Counter()
for i, p in enumerate(probes, 1):
    keys = {"id", "project", "question", "expect", "stale", "kind", "note"}
    if set(p) != keys:
        err(f"probe {i}: keys {sorted(p)}"); continue
    if p["id"] != f"pi-q{i:02d}":
        err(f"probe {i}: id {p['id']} expected pi-q{i:02d}")
    if p["id"] in ids:
        err(f"probe {p['id']}: duplicate id")
    ids.add(p["id"])
    if p["project"] not in PROJECTS:
        err(f"probe {p['id']}: bad project")
        continue
    if p["kind"] not in KINDS:
        err(f"probe {p['id']}: bad kind {p['kind']}")
    kinds[p["kind"]] += 1
    if not isinstance(p["expect"], list) or not isinstance(p["stale"], list):
        err(f"probe {p['id']}: expect/stale must be lists"); continue
    if p["kind"] == "secret":
        if p["expect"]:
            err(f"probe {p['id']}: secret probe must have empty expect")
        if not p["stale"]:
            err(f"probe {p['id']}: secret probe must list the secret in stale")
    else:
        if not 1 <= len(p["expect"]) <= 2:
            err(f"probe {p['id']}: expect must have 1-2 tokens")
    if p["kind"] in {"current", "trap", "retraction", "other_project"} and not p["stale"]:
        err(f"probe {p['id']}: kind {p['kind']} should list stale tokens")
    if len(p["question"]) < 15 or not p["note"]:
        err(f"probe {p['id']}: question/note too short")
    for tok in p["expect"]:
        if tok not in corpus[p["project"]]:
            err(f"probe {p['id']}: expect token {tok!r} not found in {p['project']} history")
        if tok in p["stale"]:
            err(f"probe {p['id']}: token {tok!r} is in both expect and stale")
        for st in p["stale"]:
            if st and st in tok:
                err(f"probe {p['id']}: stale {st!r} is a substring of expect {tok!r}")
    for st in p["stale"]:
        if p["kind"] in {"secret", "current", "retraction", "trap"} and st not in corpus[p["project"]]:
            err(f"probe {p['id']}: stale token {st!r} never appears in {p['project']} history")
        if p["kind"] == "other_project":
            others = "\n".join(v for k, v in corpus.items() if k != p["project"])
            if st not in others:
                err(f"probe {p['id']}: other_project stale {st!r} not found in other projects")
    # the question should not leak the expected answer
    for tok in p["expect"]:
        if tok.lower() in p["question"].lower():
            err(f"probe {p['id']}: question contains expected token {tok!r}")

for k, v in TARGET_KINDS.items():
    if kinds[k] != v:
        err(f"kind {k}: {kinds[k]} probes, expected {v}")

# secrets must only appear where pasted (user side), never echoed by the assistant
for p in probes:
    if p.get("kind") == "secret":
        for st in p["stale"]:
            for n, r in rows:
                if st in r["assistant"]:
                    err(f"secret {st!r} echoed by assistant at line {n}")

# ---------------------------------------------------------------- report
print(f"turns: {len(rows)}  sessions: {len(session_turns)}  "
      f"per project: {dict(Counter(session_project.values()))}")
print(f"probes: {len(probes)}  kinds: {dict(kinds)}")
if errors:
    print(f"\nFAILED with {len(errors)} error(s):")
    for e in errors:
        print("  -", e)
    sys.exit(1)
print("OK: all checks passed")
