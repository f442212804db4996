"""The ``openai`` model client: any OpenAI-compatible endpoint, JSON replies checked by pydantic.

Each task (extract, judge, classify, recognize) sends a system prompt from
``configs/prompts/<task>.md`` (first line ``version: <task>-vN``, recorded on every
candidate as ``prompt_version`` and on every verdict as ``decided_by``) plus one JSON user
message, and asks for JSON: structured outputs (``response_format`` json_schema) when the
endpoint takes them, JSON mode otherwise (``[model] structured``; ``auto`` falls back to
JSON mode on an HTTP 400 and remembers). The schema is also written into the system
prompt, so both modes send the same messages and share cache entries.

A reply that does not validate is asked for once more, with the validation error shown
to the model; a second bad reply raises :class:`ModelBadReply` (the job is retried later
with backoff, never dropped). Validated replies are cached on disk
(:mod:`actors.llm.response_cache`).

Privacy: every message passes through :func:`engine.redact.redact` right before it is
sent or hashed; ``local-only`` memories are never sent (judge falls back to the rules
judge, classify and recognize leave them out). Transport, retries and the circuit
breaker live in :mod:`actors.llm.endpoint`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from actors.llm import rules_judge
from actors.llm.base import Decision, Judgement
from actors.llm.endpoint import Endpoint, EndpointRejected
from actors.llm.response_cache import ResponseCache, request_key
from actors.llm.rules_text import MEMORY_TALK, strip_memory_blocks
from configs import bundled
from engine.errors import InvalidInput, ModelBadReply
from engine.keys import normalize_belief, normalize_key
from engine.models import Candidate, Kind, Memory, Origin, Sensitivity, Unit, Verdict
from engine.redact import redact
from engine.settings import ModelSettings

PROMPTS_DIR = bundled("prompts")  # package data: configs/prompts/<task>.md
TASKS = ("extract", "judge", "classify", "recognize")
#: Prompts of the client: the tasks above, and the repair investigation (actors/llm/openai_investigator.py).
PROMPTS = (*TASKS, "investigate")
M = TypeVar("M", bound=BaseModel)


class Prompt(NamedTuple):
    version: str
    text: str


@lru_cache(maxsize=None)
def load_prompt(task: str, folder: Path = PROMPTS_DIR) -> Prompt:
    """Read ``<folder>/<task>.md`` once: a ``version: ...`` first line, then the prompt."""
    path = Path(folder) / f"{task}.md"
    try:
        head, _, body = path.read_text(encoding="utf-8").partition("\n")
    except OSError as exc:
        raise InvalidInput(f"prompt file {path} is missing: {exc.strerror}") from exc
    name, _, version = head.partition(":")
    if name.strip().lower() != "version" or not version.strip():
        raise InvalidInput(f"prompt file {path} must start with a 'version: <name>' line")
    return Prompt(version.strip(), body.strip())


def is_self_activity(text: str) -> bool:
    """Whether a text is about the memory system itself (its tools or injected blocks)."""
    return bool(MEMORY_TALK.search(text)) or "dynmem-memory" in text.casefold()


def redact_json(text: str) -> str:
    """Redact a JSON document value by value, so that it stays valid JSON.

    Redacting the serialised text can cut through an escaped quote (``\\"``) and break the
    document, and would read one field's words as the context of another field's value (a
    unit id next to a "password" in the text). Every string (keys included) is redacted on
    its own; the payloads are built here from single texts, so no secret spans two values.
    Text that is not JSON is redacted as text.
    """
    try:
        doc = json.loads(text)
    except ValueError:
        return redact(text)
    return json.dumps(_redact_values(doc), ensure_ascii=False)


@lru_cache(maxsize=64)
def _redact_system(text: str) -> str:
    """:func:`redact` of a system message, remembered: a task's prompt and schema are the same
    on every request, and redacting those 2-3k characters was half of an extraction worker's
    CPU per request (profiled with py-spy at 16 requests in flight, issue 12)."""
    return redact(text)


def _redact_values(value: object) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_values(v) for v in value]
    if isinstance(value, dict):
        return {redact(str(k)): _redact_values(v) for k, v in value.items()}
    return value


# ---- reply shapes ----------------------------------------------------------------------
class _Reply(BaseModel):
    # Lenient on extra fields (JSON mode has no schema guarantee), strict on what we use.
    model_config = ConfigDict(extra="ignore")


class ExtractedMemory(_Reply):
    text: str = Field(min_length=1)
    key: str = ""
    value: str = ""
    kind: str = "fact"
    salience: float = 0.5
    negated: bool = False
    source_unit_ids: list[str] = []

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, v: str) -> str:
        return v if v in {k.value for k in Kind} else Kind.FACT.value


class ExtractionReply(_Reply):
    memories: list[ExtractedMemory]


class JudgeReply(_Reply):
    verdict: Verdict
    reason: str = ""


class ClassifyReply(_Reply):
    action: Literal["create", "same", "update", "contradiction", "reject"]
    target: str = ""
    reason: str = ""


class RecognizeReply(_Reply):
    used: list[str]


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    # Structured outputs in strict mode: every property required, nothing else allowed.
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


_STR = {"type": "string"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "extract": _obj({"memories": {"type": "array", "items": _obj({
        "text": _STR, "key": _STR, "value": _STR,
        "kind": {"type": "string", "enum": [k.value for k in Kind]},
        "salience": {"type": "number"}, "negated": {"type": "boolean"},
        "source_unit_ids": {"type": "array", "items": _STR}})}}),
    "judge": _obj({"verdict": {"type": "string", "enum": [v.value for v in Verdict]}, "reason": _STR}),
    "classify": _obj({"action": {"type": "string", "enum": ["create", "same", "update", "contradiction", "reject"]},
                      "target": _STR, "reason": _STR}),
    "recognize": _obj({"used": {"type": "array", "items": _STR}}),
}


class _Invalid(Exception):
    """A reply that parsed but says something impossible (an unknown label, say)."""


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _memory_view(m: Memory, label: str) -> dict[str, Any]:
    return {"id": label, "text": m.text, "key": m.key, "value": m.belief, "negated": m.negated,
            "valid_from": _iso(m.valid_from_ms), "evidence": m.evidence}


class OpenAIClient:
    """``ModelClient`` over an OpenAI-compatible endpoint.

    Args:
        settings: the ``[model]`` section.
        data_dir: the data directory; the reply cache defaults to ``<data_dir>/cache``.
        endpoint: a prepared :class:`Endpoint` (tests pass one with a fake sleep).
    """

    name = "openai"

    def __init__(self, settings: ModelSettings, data_dir: Path | None = None, *,
                 endpoint: Endpoint | None = None, prompts_dir: Path = PROMPTS_DIR) -> None:
        if not settings.openai_model and not all(getattr(settings, f"{t}_model") for t in TASKS):
            raise InvalidInput("the openai model client needs [model] openai_model (DYNMEM_OPENAI_MODEL)")
        self.settings = settings
        self.endpoint = endpoint or Endpoint(settings)
        self.prompts = {t: load_prompt(t, prompts_dir) for t in PROMPTS}
        self.last_stopped = ""  # why the last investigation stopped reading early
        self.structured = settings.structured  # "auto" becomes "json_object" after a 400
        cache_dir = Path(settings.cache_dir) if settings.cache_dir else (Path(data_dir) / "cache" if data_dir else None)
        self.cache = (ResponseCache(cache_dir, int(settings.cache_max_mb * 1024 * 1024))
                      if cache_dir is not None and settings.cache_max_mb > 0 else None)
        self.cache_hits = 0

    def model_for(self, task: str) -> str:
        return str(getattr(self.settings, f"{task}_model", "") or self.settings.openai_model)

    def decided_by(self, task: str = "judge") -> str:
        return f"openai:{self.model_for(task)}@{self.prompts[task].version}"

    # ---- the protocol -----------------------------------------------------------------
    def extract(self, units: Sequence[Unit], scope: str) -> list[Candidate]:
        """Candidates stated in the units, each citing units it came from."""
        units = list(units)
        if not units:
            return []
        by_id = {u.id: u for u in units}
        payload = {"units": [{"id": u.id, "time": _iso(u.ts_ms), "session": u.session,
                              "user": strip_memory_blocks(u.user).strip(),
                              "assistant": strip_memory_blocks(u.assistant).strip()} for u in units]}
        reply = self._ask("extract", payload, ExtractionReply)
        version = self.prompts["extract"].version
        out: list[Candidate] = []
        seen: set[tuple[str, str, bool, str]] = set()
        for item in reply.memories:
            cited = list(dict.fromkeys(i for i in item.source_unit_ids if i in by_id))
            if not cited and len(units) == 1:
                cited = [units[0].id]  # one unit shown: it is the only possible source
            text = redact(item.text).strip()
            if not cited or not text or is_self_activity(text):
                continue  # ungrounded, empty, or the memory system talking about itself
            belief = normalize_belief(redact(item.value))
            key = normalize_key(redact(item.key)) if belief else ""  # a key without a value would supersede
            ident = (key, belief, item.negated, text if not key else "")
            if ident in seen:
                continue
            seen.add(ident)
            out.append(Candidate(
                text=text, key=key, belief=belief, kind=Kind(item.kind),
                salience=round(min(max(item.salience, 0.0), 1.0), 3), scope=scope,
                source_unit_ids=tuple(cited), valid_from_ms=max(by_id[i].ts_ms for i in cited),
                origin=Origin.EXTRACTOR, prompt_version=version, negated=item.negated))
        return out

    def judge(self, a: Memory, b: Memory) -> Judgement:
        """same / update / contradiction / unrelated, with a reason and who decided."""
        if Sensitivity.LOCAL_ONLY in (a.sensitivity, b.sensitivity):
            return rules_judge.judge(a, b)  # local-only never reaches a model
        reply = self._ask("judge", {"a": _memory_view(a, "A"), "b": _memory_view(b, "B")}, JudgeReply)
        return Judgement(verdict=reply.verdict, reason=redact(reply.reason.strip()) or "no reason given",
                         decided_by=self.decided_by("judge"))

    def classify(self, candidate: Candidate, neighbours: Sequence[Memory]) -> Decision:
        """create / same as X / update of X / contradiction with X / reject."""
        if candidate.sensitivity == Sensitivity.LOCAL_ONLY:
            return rules_judge.classify(candidate, neighbours)
        shown = [m for m in neighbours if m.sensitivity != Sensitivity.LOCAL_ONLY]
        if not shown:
            return Decision(action="create", reason="no neighbour to compare with")
        labels = {f"N{i + 1}": m for i, m in enumerate(shown)}

        def check(r: ClassifyReply) -> None:
            if r.action in ("same", "update", "contradiction") and r.target not in labels:
                raise _Invalid(f"target must be one of {sorted(labels)} for action {r.action!r}, got {r.target!r}")

        payload = {"candidate": {"text": candidate.text, "key": candidate.key, "value": candidate.belief,
                                 "negated": candidate.negated, "valid_from": _iso(candidate.valid_from_ms)},
                   "neighbours": [_memory_view(m, label) for label, m in labels.items()]}
        reply = self._ask("classify", payload, ClassifyReply, check)
        target = labels[reply.target].id if reply.action in ("same", "update", "contradiction") else None
        return Decision(action=reply.action, target_id=target, reason=redact(reply.reason.strip()) or reply.action)

    def recognize(self, answer: str, injected: Sequence[Memory]) -> list[str]:
        """Ids of the injected memories that the answer used (unknown labels dropped)."""
        shown = [m for m in injected if m.sensitivity != Sensitivity.LOCAL_ONLY]
        if not shown or not answer.strip():
            return []
        labels = {f"M{i + 1}": m for i, m in enumerate(shown)}
        payload = {"answer": strip_memory_blocks(answer).strip(),
                   "memories": [{"id": label, "text": m.text} for label, m in labels.items()]}
        reply = self._ask("recognize", payload, RecognizeReply)
        return list(dict.fromkeys(labels[x].id for x in reply.used if x in labels))

    # ---- requests ---------------------------------------------------------------------
    def _messages(self, task: str, payload: Mapping[str, Any]) -> list[dict[str, str]]:
        schema = json.dumps(SCHEMAS[task], separators=(",", ":"))
        system = f"{self.prompts[task].text}\n\nThe JSON object must follow this JSON Schema:\n{schema}"
        return [{"role": "system", "content": system},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False)}]

    def _ask(self, task: str, payload: Mapping[str, Any], shape: type[M],
             check: Callable[[M], None] | None = None) -> M:
        return self._exchange(task, self._messages(task, payload), shape, SCHEMAS[task], check)[0]

    def ask_messages(self, task: str, messages: Sequence[Mapping[str, str]], shape: type[M],
                     schema: Mapping[str, Any]) -> tuple[M, str]:
        """A multi-turn exchange (the investigator's tool loop): the task's prompt, then ``messages``.

        Returns the validated reply and its raw text (to append as the assistant's turn).
        """
        schema_text = json.dumps(schema, separators=(",", ":"))
        system = f"{self.prompts[task].text}\n\nThe JSON object must follow this JSON Schema:\n{schema_text}"
        return self._exchange(task, [{"role": "system", "content": system}, *map(dict, messages)], shape, schema)

    def _exchange(self, task: str, raw: Sequence[Mapping[str, str]], shape: type[M], schema: Mapping[str, Any],
                  check: Callable[[M], None] | None = None) -> tuple[M, str]:
        model = self.model_for(task)
        # user turns are JSON documents: redacted value by value so they stay valid JSON
        messages = [{"role": m["role"], "content": redact_json(m["content"]) if m["role"] == "user"
                     else _redact_system(m["content"]) if m["role"] == "system" else redact(m["content"])}
                    for m in raw]
        key = request_key(model, messages, dict(schema))
        if self.cache is not None:
            cached = self.cache.get(key)
            if cached is not None:
                try:
                    self.cache_hits += 1
                    return self._parse(cached, shape, check), cached
                except _Invalid:
                    self.cache_hits -= 1  # a stale or damaged entry: ask again
        content = self._complete(task, model, messages, schema)
        try:
            reply = self._parse(content, shape, check)
        except _Invalid as first:
            retry = [*messages, {"role": "assistant", "content": redact(content)},
                     {"role": "user", "content": redact(
                         f"That reply is not valid: {first}. Answer again with only one JSON object "
                         f"that follows the schema.")}]
            content = self._complete(task, model, retry, schema)
            try:
                reply = self._parse(content, shape, check)
            except _Invalid as second:
                raise ModelBadReply(redact(f"{task}: the reply of {model} did not validate twice: {second}")) from None
        content = redact(content)  # a model that parrots or invents a secret: never stored or resent
        if self.cache is not None:
            self.cache.put(key, content)
        return reply, content

    def _complete(self, task: str, model: str, messages: list[dict[str, str]], schema: Mapping[str, Any]) -> str:
        if self.structured in ("auto", "json_schema"):
            fmt = {"type": "json_schema", "json_schema": {"name": f"dynmem_{task}", "strict": True,
                                                          "schema": dict(schema)}}
            try:
                return self.endpoint.chat(model, messages, fmt)
            except EndpointRejected as exc:
                if self.structured != "auto" or (exc.status not in (400, 422) and "response_format" not in exc.message):
                    raise
                self.structured = "json_object"  # this endpoint has no structured outputs
        return self.endpoint.chat(model, messages, {"type": "json_object"})

    @staticmethod
    def _parse(content: str, shape: type[M], check: Callable[[M], None] | None) -> M:
        text = content.strip()
        if text.startswith("```"):  # some local models fence JSON even in JSON mode
            text = text.strip("`").removeprefix("json").strip()
        try:
            reply = shape.model_validate_json(text)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()[:5])
            raise _Invalid(problems) from None
        if check is not None:
            check(reply)
        return reply

    # ---- repair -----------------------------------------------------------------------
    def investigate(self, signal: Any, log: Any) -> list[Candidate]:
        """A model-driven investigation through the service's budgeted, bounded log view."""
        from actors.llm.openai_investigator import ModelInvestigator

        inv = ModelInvestigator(self, signal, log)
        try:
            return inv.run()
        finally:
            self.last_stopped = inv.stopped

    # ---- doctor -----------------------------------------------------------------------
    def check(self) -> str:
        """List the models and send one tiny JSON request; a one-line verdict or a ModelError."""
        models = self.endpoint.list_models()
        self.probe()
        name = self.model_for("extract")
        listed = "listed" if name in models else "not listed by /models, but answered"
        return f"{name} at {self.settings.openai_base_url} answers JSON ({listed}; structured={self.settings.structured})"

    def probe(self) -> str:
        """Send one tiny JSON request (no cache); returns the reply text or raises a ModelError."""
        messages = [{"role": "system", "content": 'Reply with the JSON object {"ok": true} and nothing else.'},
                    {"role": "user", "content": "ping"}]
        content = self.endpoint.chat(self.model_for("extract"), messages, {"type": "json_object"})
        try:
            json.loads(content)
        except ValueError as exc:
            raise ModelBadReply(f"the model answered a JSON request with text that is not JSON: {content[:80]!r}") from exc
        return content
