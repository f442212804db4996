#!/usr/bin/env python3
"""Validate history.jsonl and probes.json in this directory.

Checks
- history: 190-220 lines, exact keys, string types, ISO UTC timestamps,
  strictly increasing timestamps, request ids om-0001.. in order, session ids
  use the project's prefix, each session is contiguous, single-project and
  has 3-7 turns, session numbers per project increase.
- probes: 70 objects, exact keys, ids om-q01..om-q70, known project + kind,
  kind mix, 1-2 expect tokens (0 for secret), every expect token occurs in the
  history of its project, no expect token is in its own stale list (nor a
  substring of a stale token), secret probes have stale tokens that really
  occur in the history, stale tokens of current/retraction/trap probes occur
  in the same project's history, stale tokens of other_project probes occur
  in some other project's history, and no secret shows up in any expect list.
"""
import json
import re
import sys
from collections import Counter, OrderedDict
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
PREFIX = {"tidewatch": "tw", "herbarium": "hb", "kessel": "ks"}
KINDS_WANTED = {"current": 25, "stable": 22, "retraction": 6, "trap": 6,
                "secret": 4, "other_project": 7}
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")

errors = []


def err(msg):
    errors.append(msg)


# ------------------------------------------------------------------ history
hist_path = HERE / "history.jsonl"
lines = hist_path.read_text(encoding="utf-8").splitlines()
if not 190 <= len(lines) <= 220:
    err(f"history has {len(lines)} lines, expected 190-220")

rows = []
for i, line in enumerate(lines, 1):
    try:
        r = json.loads(line)
    except json.JSONDecodeError as e:
        err(f"history line {i}: invalid JSON ({e})")
        continue
    keys = {"project", "session", "ts", "user", "assistant", "request_id"}
    if set(r) != keys:
        err(f"history line {i}: keys {sorted(r)} != {sorted(keys)}")
        continue
    for k in keys:
        if not isinstance(r[k], str) or not r[k].strip():
            err(f"history line {i}: field {k} empty or not a string")
    rows.append(r)

prev_ts = None
seen_sessions = OrderedDict()
last_session = None
closed = set()
last_num = {}
for i, r in enumerate(rows, 1):
    if r["request_id"] != f"om-{i:04d}":
        err(f"line {i}: request_id {r['request_id']} expected om-{i:04d}")
    if r["project"] not in PREFIX:
        err(f"line {i}: unknown project {r['project']}")
        continue
    if not TS_RE.match(r["ts"]):
        err(f"line {i}: bad ts {r['ts']}")
        continue
    ts = datetime.strptime(r["ts"], "%Y-%m-%dT%H:%M:%SZ")
    if prev_ts and ts <= prev_ts:
        err(f"line {i}: ts {r['ts']} not after previous")
    prev_ts = ts
    m = re.fullmatch(r"([a-z]+)-(\d{2})", r["session"])
    if not m or m.group(1) != PREFIX[r["project"]]:
        err(f"line {i}: session {r['session']} does not match project {r['project']}")
    s = r["session"]
    if s != last_session:
        if s in closed or s in seen_sessions:
            err(f"line {i}: session {s} is not contiguous")
        if last_session:
            closed.add(last_session)
        if m:
            num = int(m.group(2))
            if num <= last_num.get(r["project"], 0):
                err(f"line {i}: session number {s} not increasing for {r['project']}")
            last_num[r["project"]] = num
        seen_sessions[s] = {"project": r["project"], "n": 0}
        last_session = s
    if seen_sessions[s]["project"] != r["project"]:
        err(f"line {i}: session {s} mixes projects")
    seen_sessions[s]["n"] += 1

for s, info in seen_sessions.items():
    if not 3 <= info["n"] <= 7:
        err(f"session {s} has {info['n']} turns, expected 3-7")

proj_text = {p: "" for p in PREFIX}
for r in rows:
    if r["project"] in proj_text:
        proj_text[r["project"]] += "\n" + r["user"] + "\n" + r["assistant"]
all_text = "\n".join(proj_text.values())

# ------------------------------------------------------------------ probes
probes = json.loads((HERE / "probes.json").read_text(encoding="utf-8"))
if not isinstance(probes, list) or len(probes) != 70:
    err(f"probes.json must be a list of 70, got {len(probes) if isinstance(probes, list) else type(probes)}")
    probes = probes if isinstance(probes, list) else []

pkeys = {"id", "project", "question", "expect", "stale", "kind", "note"}
ids = set()
kinds = Counter()
secrets = set()
for j, p in enumerate(probes, 1):
    if set(p) != pkeys:
        err(f"probe {j}: keys {sorted(p)} != {sorted(pkeys)}")
        continue
    pid = p["id"]
    if pid != f"om-q{j:02d}":
        err(f"probe {j}: id {pid} expected om-q{j:02d}")
    if pid in ids:
        err(f"probe {pid}: duplicate id")
    ids.add(pid)
    if p["project"] not in PREFIX:
        err(f"{pid}: unknown project {p['project']}")
        continue
    if p["kind"] not in KINDS_WANTED:
        err(f"{pid}: unknown kind {p['kind']}")
        continue
    kinds[p["kind"]] += 1
    for fld in ("question", "note"):
        if not isinstance(p[fld], str) or not p[fld].strip():
            err(f"{pid}: {fld} empty")
    if not isinstance(p["expect"], list) or not isinstance(p["stale"], list):
        err(f"{pid}: expect/stale must be lists")
        continue
    if not all(isinstance(t, str) and t for t in p["expect"] + p["stale"]):
        err(f"{pid}: tokens must be non-empty strings")
        continue
    if p["kind"] == "secret":
        if p["expect"]:
            err(f"{pid}: secret probe must have empty expect")
        if not p["stale"]:
            err(f"{pid}: secret probe needs the secret in stale")
        secrets.update(p["stale"])
    else:
        if not 1 <= len(p["expect"]) <= 2:
            err(f"{pid}: expect must have 1-2 tokens")
    text = proj_text[p["project"]]
    for t in p["expect"]:
        if t not in text:
            err(f"{pid}: expect token {t!r} not found in {p['project']} history")
        for s in p["stale"]:
            if t == s or t in s:
                err(f"{pid}: expect token {t!r} collides with stale token {s!r}")
    if p["kind"] in ("current", "retraction", "trap", "secret"):
        for s in p["stale"]:
            if s not in text:
                err(f"{pid}: stale token {s!r} ({p['kind']}) not found in {p['project']} history")
    if p["kind"] == "current" and not p["stale"]:
        err(f"{pid}: current probe needs at least one older value in stale")
    if p["kind"] in ("trap", "retraction") and not p["stale"]:
        err(f"{pid}: {p['kind']} probe needs a stale token")
    if p["kind"] == "other_project":
        others = "\n".join(v for k, v in proj_text.items() if k != p["project"])
        if not p["stale"]:
            err(f"{pid}: other_project probe needs stale tokens from other projects")
        for s in p["stale"]:
            if s not in others:
                err(f"{pid}: other_project stale {s!r} not found in another project's history")

for k, want in KINDS_WANTED.items():
    if kinds[k] != want:
        err(f"kind {k}: {kinds[k]} probes, expected {want}")

for p in probes:
    for t in p.get("expect", []):
        if t in secrets:
            err(f"{p['id']}: expect token {t!r} is a secret")

# ------------------------------------------------------------------ report
if errors:
    print(f"FAIL ({len(errors)} problems)")
    for e in errors:
        print("  -", e)
    sys.exit(1)

per_proj = Counter(r["project"] for r in rows)
print(f"OK: {len(rows)} turns in {len(seen_sessions)} sessions "
      f"({', '.join(f'{k} {v}' for k, v in per_proj.items())}); "
      f"{rows[0]['ts']} .. {rows[-1]['ts']}")
print("probes:", ", ".join(f"{k} {kinds[k]}" for k in KINDS_WANTED), f"(total {len(probes)})")
