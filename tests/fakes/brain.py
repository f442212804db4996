"""A deterministic "model" for the fake OpenAI server: answers dynmem's own prompts.

The openai client's prompts (configs/prompts/*.md) are recognised by their system
message; the JSON answers are computed with the offline rules client, so a replay through
the openai client on the fake server gives real, reproducible memories:

- extract: the rules extractor run on the units of the request;
- judge: the rules judge on the two memories shown;
- recognize: the rules recognizer;
- investigate: one ``search`` for the signal's query, then proposals made by the rules
  extractor from the units the tool result showed (the keys and values it shares with
  the query), citing those units.

Requests it does not know (opencode's own chat) get ``None``: the server's script answers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from actors.llm import rules_judge
from actors.llm.rules import RulesClient
from engine.models import Memory, Unit
from engine.miss_signals import key_terms, shared_terms

PROMPT_MARKERS = {
    "extract": "distil a coding agent",
    "judge": "compare two memories",
    "recognize": "which injected memories",
    "investigate": "investigate a memory miss",
}
_RULES = RulesClient()


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _memory(view: Mapping[str, Any]) -> Memory:
    t = _ms(view["valid_from"])
    return Memory(id=view["id"], scope="project:fake", text=view["text"], key=view.get("key", ""),
                  belief=view.get("value", ""), negated=bool(view.get("negated")), fingerprint=view["id"], value=0.5,
                  valid_from_ms=t, last_evidence_ms=t, recorded_at_ms=t, evidence=int(view.get("evidence", 1)))


def _units(views: list[Mapping[str, Any]]) -> list[Unit]:
    return [Unit(id=u["id"], project="fake", session=str(u.get("session", "s")), turn=int(u.get("turn", i + 1)),
                 ts_ms=_ms(u["time"]), user=u["user"], assistant=u["assistant"], request_id=u["id"])
            for i, u in enumerate(views)]


def _memories_json(units: list[Unit], terms: list[str] | None = None) -> list[dict[str, Any]]:
    out = []
    for c in _RULES.extract(units, "project:fake"):
        if terms is not None and len(shared_terms(terms, f"{c.text} {c.key}")) < min(2, len(terms)):
            continue
        out.append({"text": c.text, "key": c.key, "value": c.belief, "kind": c.kind.value,
                    "salience": c.salience, "negated": c.negated, "source_unit_ids": list(c.source_unit_ids)})
    return out


def task_of(body: Mapping[str, Any]) -> str | None:
    """Which dynmem prompt a chat request carries, if any."""
    messages = body.get("messages") or []
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
    if not isinstance(system, str):
        return None
    return next((task for task, marker in PROMPT_MARKERS.items() if marker in system), None)


def answer(body: Mapping[str, Any]) -> str | None:
    """The JSON answer to one of dynmem's prompts, or None for any other request."""
    task = task_of(body)
    if task is None:
        return None
    messages = body["messages"]
    try:
        first = json.loads(next(m["content"] for m in messages if m["role"] == "user"))
    except ValueError:
        return "that request is not JSON"  # the client must see a bad reply, not a dropped connection
    if task == "extract":
        return json.dumps({"memories": _memories_json(_units(first["units"]))})
    if task == "judge":
        j = rules_judge.judge(_memory(first["a"]), _memory(first["b"]))
        return json.dumps({"verdict": j.verdict.value, "reason": f"brain: {j.reason}"})
    if task == "recognize":
        shown = [_memory({**m, "valid_from": "2026-01-01T00:00:00Z"}) for m in first["memories"]]
        return json.dumps({"used": rules_judge.recognize(first["answer"], shown)})
    # investigate: search once, then propose from what the tool result showed
    idle = {"query": "", "around_turn": 0, "unit_id": "", "proposals": []}
    results = [json.loads(m["content"]) for m in messages[2:] if m["role"] == "user"]
    shown = [u for r in results for u in r.get("tool_result", {}).get("units", []) if isinstance(r, dict)]
    if not results:
        return json.dumps({**idle, "action": "search", "query": " ".join(key_terms(first["signal"]["query"]))})
    terms = key_terms(first["signal"]["query"])
    return json.dumps({**idle, "action": "propose", "proposals": _memories_json(_units(shown), terms)[:3]})
