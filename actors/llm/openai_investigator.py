"""The model-driven repair investigator of the openai client (DESIGN §6).

A tool loop over chat completions: the model is shown the signal and answers with one
JSON action at a time (``search``, ``timeline``, ``window`` or ``propose``); each read is
carried out through the :class:`~actors.investigator_actor.BudgetedLog` the service hands
in, so the budget (tool calls, revealed characters) and the causal bound (only units
before the signal) are enforced by the service, exactly as for the rules investigator,
whatever the model asks for. When a budget is spent, or after ``budget_calls`` reads, the
model is asked once more to propose from what it has read.

Proposals become :class:`~engine.models.Candidate` rows citing units the model was shown;
the service then checks each one's grounding against the cited units. Everything sent
passes through :func:`engine.redact.redact` (in :meth:`OpenAIClient.ask_messages`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from actors.llm.openai_client import ExtractedMemory, _iso, _Reply, is_self_activity
from engine.errors import BudgetExceeded
from engine.keys import normalize_belief, normalize_key
from engine.models import Candidate, Kind, Origin, Unit
from engine.redact import redact

if TYPE_CHECKING:
    from actors.investigator_actor import BudgetedLog, RepairSignal
    from actors.llm.openai_client import OpenAIClient

#: Units shown per tool result; the budget limits characters, this keeps one result readable.
MAX_UNITS_SHOWN = 8
MAX_PROPOSALS = 3


class InvestigateReply(_Reply):
    action: Literal["search", "timeline", "window", "propose"]
    query: str = ""
    around_turn: int = 0
    unit_id: str = ""
    proposals: list[ExtractedMemory] = Field(default_factory=list)


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


_STR = {"type": "string"}
SCHEMA: dict[str, Any] = _obj({
    "action": {"type": "string", "enum": ["search", "timeline", "window", "propose"]},
    "query": _STR, "around_turn": {"type": "integer"}, "unit_id": _STR,
    "proposals": {"type": "array", "items": _obj({
        "text": _STR, "key": _STR, "value": _STR,
        "kind": {"type": "string", "enum": [k.value for k in Kind]},
        "salience": {"type": "number"}, "negated": {"type": "boolean"},
        "source_unit_ids": {"type": "array", "items": _STR}})}})


def _units_view(units: Sequence[Unit]) -> list[dict[str, Any]]:
    return [{"id": u.id, "turn": u.turn, "time": _iso(u.ts_ms), "user": u.user, "assistant": u.assistant}
            for u in units[:MAX_UNITS_SHOWN]]


class ModelInvestigator:
    """One investigation: the model chooses the reads, the budgeted log enforces the limits."""

    def __init__(self, client: OpenAIClient, signal: RepairSignal, log: BudgetedLog) -> None:
        self.client = client
        self.signal = signal
        self.log = log
        self.seen: dict[str, Unit] = {}
        self.stopped = ""

    def _budget(self) -> dict[str, int]:
        return {"tool_calls_left": self.log.calls_left, "chars_left": self.log.chars_left}

    def run(self) -> list[Candidate]:
        """Proposals citing units the model read (``stopped`` says why reading ended early)."""
        first = {"signal": {"query": self.signal.query, "kind": self.signal.kind,
                            "bound_turn": self.signal.bound_turn}, "budget": self._budget()}
        messages: list[dict[str, str]] = [{"role": "user", "content": json.dumps(first, ensure_ascii=False)}]
        for _ in range(self.log.budget_calls + 1):
            reply, content = self.client.ask_messages("investigate", messages, InvestigateReply, SCHEMA)
            if reply.action == "propose":
                return self._proposals(reply)
            messages.append({"role": "assistant", "content": content})
            try:
                result = self._read(reply)
            except BudgetExceeded as exc:
                self.stopped = exc.message
                break
            messages.append({"role": "user", "content": json.dumps(
                {"tool_result": result, "budget": self._budget()}, ensure_ascii=False)})
        else:
            self.stopped = self.stopped or "the model kept reading past its budget"
        messages.append({"role": "user", "content": json.dumps(
            {"tool_result": {"error": f"no more reading: {self.stopped or 'budget spent'}"},
             "instruction": "propose now from what you have read", "budget": self._budget()})})
        reply, _ = self.client.ask_messages("investigate", messages, InvestigateReply, SCHEMA)
        return self._proposals(reply) if reply.action == "propose" else []

    def _read(self, reply: InvestigateReply) -> dict[str, Any]:
        if reply.action == "search":
            hits = self.log.search(reply.query or self.signal.query, limit=MAX_UNITS_SHOWN)
            units = [h.unit for h in hits]
        elif reply.action == "timeline":
            units = self.log.timeline(around_turn=reply.around_turn or None, limit=MAX_UNITS_SHOWN)
        else:
            units = self.log.window(reply.unit_id, radius=1)
        for u in units:
            if u.id not in self.log.truncated_ids:
                self.seen.setdefault(u.id, u)
        return {"units": _units_view(units)} if units else {"units": [], "note": "nothing found"}

    def _proposals(self, reply: InvestigateReply) -> list[Candidate]:
        out: list[Candidate] = []
        version = self.client.prompts["investigate"].version
        for item in reply.proposals[:MAX_PROPOSALS]:
            cited = [i for i in dict.fromkeys(item.source_unit_ids) if i in self.seen]
            text = redact(item.text).strip()
            if not text or is_self_activity(text):
                continue
            # Cites of units the model was not shown are kept as given: the service's grounding
            # check names them (unknown, or past the bound) instead of them vanishing here.
            cites = cited or list(dict.fromkeys(item.source_unit_ids))
            if not cites:
                continue
            belief = normalize_belief(redact(item.value))
            valid_from = max((self.seen[i].ts_ms for i in cited), default=0)
            out.append(Candidate(
                text=text, key=normalize_key(redact(item.key)) if belief else "", belief=belief,
                kind=Kind(item.kind), salience=round(min(max(item.salience, 0.0), 1.0), 3),
                scope=self.signal.scope, source_unit_ids=tuple(cites), valid_from_ms=valid_from,
                origin=Origin.REPAIR, prompt_version=version, negated=item.negated))
        return out
