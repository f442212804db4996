"""Removals read on wording nobody tuned on: ``python -m eval.removals.measure [--out DIR]``.

Two helpers wrote chat messages from a brief alone (``data/README.md``): 150 each that say a named
thing is no longer used, and 150 each that name a thing with words of removal or change but do not say
it is gone (proposals, questions, another thing removed, undone removals). Each message goes through the
rules client's ``extract_unit`` as the user's turn or the assistant's reply, in both profiles:

- a removal is *read* when a candidate that retires something (``negated``) names the thing;
- a non-removal is *misread* when such a candidate names the thing.

A removal that is not read leaves the old fact served; a misread one retires a fact that still holds.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from eval import jsonl

DATA = Path(__file__).resolve().parent / "data"


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str = Field(pattern="^(removal|not_removal)$")
    speaker: str = Field(pattern="^(user|assistant)$")
    thing: str = Field(min_length=1)
    text: str = Field(min_length=1)


def load(path: Path) -> list[Message]:
    out = []
    for n, m in jsonl.rows(path, Message):
        if m.thing not in m.text:
            raise ValueError(f"{path.name} line {n}: the thing {m.thing!r} is not in the text")
        out.append(m)
    return out


def retires(message: Message, extractive: bool = False) -> bool:
    """Whether the rules client retires the message's thing."""
    from actors.llm.rules_extract import extract_unit
    from engine.models import Unit

    user, assistant = (message.text, "") if message.speaker == "user" else ("", message.text)
    unit = Unit(id="u1", project="p", session="s", ts_ms=1, user=user, assistant=assistant, turn=1, request_id="r1")
    thing = message.thing.strip("`").lower()
    return any(c.negated and thing in f"{c.belief} {c.text}".lower().replace("`", "")
               for c in extract_unit(unit, "project:p", extractive=extractive))


def measure(folder: Path = DATA) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("part*.jsonl")):
        for m in load(path):
            for profile in ("default", "extractive"):
                rows.append({"part": path.stem, "kind": m.kind, "speaker": m.speaker, "profile": profile,
                             "retired": retires(m, extractive=profile == "extractive")})
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    n: Counter[tuple[object, ...]] = Counter()
    hit: Counter[tuple[object, ...]] = Counter()
    for r in rows:
        for key in ((r["profile"], r["kind"], r["speaker"]), (r["profile"], r["kind"], "all")):
            n[key] += 1
            hit[key] += bool(r["retired"])
    lines = ["# Removals read on wording nobody tuned on", "",
             "Messages written from a brief by two helpers (`eval/removals/data/README.md`), each put through the rules",
             "client as the user's turn or the assistant's reply. Reproduce: `python -m eval.removals.measure --out eval/results`.",
             "", "| profile | speaker | removals read | non-removals misread as removals |", "|---|---|---|---|"]
    for profile in ("default", "extractive"):
        for speaker in ("user", "assistant", "all"):
            a, b = (profile, "removal", speaker), (profile, "not_removal", speaker)
            lines.append(f"| {profile} | {speaker} | {hit[a]} / {n[a]} ({hit[a] / max(1, n[a]):.0%}) | "
                         f"{hit[b]} / {n[b]} ({hit[b] / max(1, n[b]):.0%}) |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", help="write removals.md into this folder")
    args = ap.parse_args()
    doc = render(measure())
    print(doc)
    if args.out:
        Path(args.out, "removals.md").write_text(doc, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
