"""InvestigatorActor: answers a repair signal by reading the log and proposing grounded memories.

DESIGN §6. A signal (a correction, a memory question recall abstained on, the agent
reaching for a log tool...) names a query and a *bound*: the turn of the signal. The
investigator reads the log through :class:`BudgetedLog`, which the service controls,
not the investigator:

- only units with ``turn < bound_turn`` ever come back (later ones are dropped before
  anything is counted or shown);
- at most ``budget_calls`` tool calls (default 8) and ``budget_chars`` revealed
  characters (default 4,000); the call that would go past either raises
  :class:`~engine.errors.BudgetExceeded`, and the last reveal is cut at the limit;
- every call is recorded (tool, arguments, unit ids returned, characters revealed);
- it only reads: investigating never changes what it investigates.

Proposals are then checked by :func:`engine.grounding.check_proposal` against the units
they cite, fetched by the service; only grounded ones are accepted.

The ``rules`` client gets a deterministic investigator (search for the query's key
terms, read the best hits, extract, else quote the best sentence). Other clients that
offer ``investigate(signal, log)`` are asked to do it themselves through the same
budgeted log: the openai client runs a model-driven tool loop
(:mod:`actors.llm.openai_investigator`), under the same budget and causal bound, since
both are enforced by the log view, not by the investigator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import Field

from actors.llm.base import ModelClient
from actors.llm.factory import make_client
from actors.llm.rules_text import MEMORY_TALK, assistant_ok, clauses, is_statement, sentences, strip_fillers
from actors.store.log_store import LogHit
from engine.errors import BudgetExceeded, EmptyQuery, InvalidInput, NotFound
from engine.grounding import Grounding, check_proposal
from engine.keys import normalize_text
from engine.models import Candidate, Frozen, Kind, Origin, Unit
from engine.settings import ModelSettings
from engine.miss_signals import key_terms, shared_terms
from engine.utterance import asks, unwrap

__all__ = [
    "DEFAULT_BUDGET_CALLS",
    "DEFAULT_BUDGET_CHARS",
    "REPAIR_PROMPT_VERSION",
    "BudgetedLog",
    "Investigation",
    "InvestigatorService",
    "LogTools",
    "ProposalVerdict",
    "RepairSignal",
    "ToolCall",
]

#: DESIGN §6: "default 8 tool calls, 4,000 revealed characters".
DEFAULT_BUDGET_CALLS = 8
DEFAULT_BUDGET_CHARS = 4_000
REPAIR_PROMPT_VERSION = "repair-rules-v1"
#: Hits the rules investigator asks for, and how many it proposes at most.
SEARCH_LIMIT = 5
MAX_PROPOSALS = 3
#: A sentence longer than this is cut to its best clause before it is proposed.
MAX_SENTENCE_CHARS = 280

T = TypeVar("T")
Args = dict[str, str | int | list[str] | None]


class LogTools(Protocol):
    """The read-only log views an investigation may use (``LogStore`` fits; call by keyword)."""

    def search(self, query: str, limit: int = 10, before_turn: int | None = None) -> list[LogHit]: ...

    def timeline(self, around_turn: int | None = None, limit: int = 20) -> list[Unit]: ...

    def window(self, unit_id: str, radius: int = 2) -> list[Unit]: ...

    def units(self, ids: Sequence[str]) -> list[Unit]: ...


class RepairSignal(Frozen):
    """Evidence that memory failed, and the point in the log it happened."""

    query: str = Field(description="what memory should have answered: the question or the correction")
    kind: str = Field(description="correction, abstained, thin_recall, log_tool or extraction_failed")
    bound_turn: int = Field(ge=1, description="turn of the signal; only units before it may be read")
    scope: str = Field(description="scope of the proposals: 'global' or 'project:<id>'")


class ToolCall(Frozen):
    """One log read made during an investigation, as the service saw it."""

    tool: str
    args: Args
    unit_ids: tuple[str, ...] = ()
    chars: int = Field(default=0, description="characters revealed by this call (first reveals only)")
    truncated: bool = False
    refused: bool = Field(default=False, description="the budget was spent; nothing was read")
    error: str = ""


class ProposalVerdict(Frozen):
    """The grounding verdict on the proposal at the same position."""

    accepted: bool
    reason: str


class Investigation(Frozen):
    """What one investigation read, proposed and had accepted."""

    signal: RepairSignal
    trace: list[ToolCall]
    proposals: list[Candidate]
    verdicts: list[ProposalVerdict]
    calls_used: int
    chars_revealed: int
    stopped: str = Field(default="", description="why the investigation ended early, if it did")

    @property
    def accepted(self) -> list[Candidate]:
        """The grounded proposals, the only ones a caller may write."""
        return [p for p, v in zip(self.proposals, self.verdicts, strict=True) if v.accepted]


class BudgetedLog:
    """A read-only, causally bounded, budgeted view of a :class:`LogTools`, with a trace.

    Units at or after ``bound_turn`` are filtered out before counting. Characters are
    counted once per unit (re-reading a unit already shown in full is free).
    """

    def __init__(
        self,
        tools: LogTools,
        bound_turn: int,
        budget_calls: int = DEFAULT_BUDGET_CALLS,
        budget_chars: int = DEFAULT_BUDGET_CHARS,
    ) -> None:
        self._tools = tools
        self.bound_turn = bound_turn
        self.budget_calls = budget_calls
        self.budget_chars = budget_chars
        self.trace: list[ToolCall] = []
        self.calls_used = 0
        self.chars_revealed = 0
        self.truncated_ids: set[str] = set()
        self._shown: set[str] = set()

    @property
    def calls_left(self) -> int:
        return max(0, self.budget_calls - self.calls_used)

    @property
    def chars_left(self) -> int:
        return max(0, self.budget_chars - self.chars_revealed)

    # ---- the tools ------------------------------------------------------------------
    def search(self, query: str, limit: int = 10, before_turn: int | None = None) -> list[LogHit]:
        """Full-text search over units before the bound (and before ``before_turn``)."""
        bound = self.bound_turn if before_turn is None else min(before_turn, self.bound_turn)
        args: Args = {"query": query, "limit": limit, "before_turn": bound}
        self._admit("search", args)
        hits = self._read("search", args, lambda: self._tools.search(query, limit=limit, before_turn=bound))
        if hits is None:
            return []
        kept = [h for h in hits if h.unit.turn < self.bound_turn]
        units = self._reveal("search", args, [h.unit for h in kept])
        return [
            LogHit(unit=u, snippet="" if u.id in self.truncated_ids else h.snippet, score=h.score)
            for h, u in zip(kept, units, strict=False)
        ]

    def timeline(self, around_turn: int | None = None, limit: int = 20) -> list[Unit]:
        """Units around a turn, never past the bound (``around_turn`` is clamped before it)."""
        around = self.bound_turn - 1 if around_turn is None else min(around_turn, self.bound_turn - 1)
        args: Args = {"around_turn": around, "limit": limit}
        self._admit("timeline", args)
        units = self._read("timeline", args, lambda: self._tools.timeline(around_turn=around, limit=limit))
        return self._bounded("timeline", args, units)

    def window(self, unit_id: str, radius: int = 2) -> list[Unit]:
        """A unit and its neighbours, the ones before the bound only."""
        args: Args = {"unit_id": unit_id, "radius": radius}
        self._admit("window", args)
        units = self._read("window", args, lambda: self._tools.window(unit_id, radius=radius))
        return self._bounded("window", args, units)

    def units(self, ids: Sequence[str]) -> list[Unit]:
        """Units by id, the ones before the bound only."""
        args: Args = {"ids": list(ids)}
        self._admit("units", args)
        units = self._read("units", args, lambda: self._tools.units(list(ids)))
        return self._bounded("units", args, units)

    # ---- accounting -----------------------------------------------------------------
    def _admit(self, tool: str, args: Args) -> None:
        """Count a call, or record it as refused and raise when a budget is spent."""
        why = ""
        if self.calls_used >= self.budget_calls:
            why = f"tool-call budget of {self.budget_calls} spent"
        elif self.chars_revealed >= self.budget_chars:
            why = f"character budget of {self.budget_chars} spent"
        if why:
            self.trace.append(ToolCall(tool=tool, args=args, refused=True, error=why))
            raise BudgetExceeded(f"repair investigation: {why}")
        self.calls_used += 1

    def _read(self, tool: str, args: Args, call: Callable[[], list[T]]) -> list[T] | None:
        """Run a read; a bad argument (unknown unit, empty query) is recorded and gives ``None``."""
        try:
            return call()
        except (NotFound, EmptyQuery, InvalidInput) as exc:
            self.trace.append(ToolCall(tool=tool, args=args, error=f"{type(exc).__name__}: {exc.message}"))
            return None

    def _bounded(self, tool: str, args: Args, units: list[Unit] | None) -> list[Unit]:
        if units is None:
            return []
        return self._reveal(tool, args, [u for u in units if u.turn < self.bound_turn])

    def _reveal(self, tool: str, args: Args, units: list[Unit]) -> list[Unit]:
        """Charge the characters of units shown for the first time; cut the one that crosses the budget."""
        out: list[Unit] = []
        chars = 0
        truncated = False
        for unit in units:
            if unit.id in self._shown:
                out.append(unit)
                continue
            size = len(unit.user) + len(unit.assistant)
            room = self.budget_chars - self.chars_revealed - chars
            if size <= room:
                chars += size
                self._shown.add(unit.id)
                out.append(unit)
                continue
            if room > 0:
                user = unit.user[:room]
                assistant = unit.assistant[: max(0, room - len(unit.user))]
                chars += len(user) + len(assistant)
                self.truncated_ids.add(unit.id)
                out.append(unit.model_copy(update={"user": user, "assistant": assistant}))
            truncated = True
            break
        self.chars_revealed += chars
        self.trace.append(
            ToolCall(tool=tool, args=args, unit_ids=tuple(u.id for u in out), chars=chars, truncated=truncated)
        )
        return out


class InvestigatorService:
    """Runs repair investigations with the configured model client (DESIGN §6).

    Args:
        model: the ``[model]`` section; the client is built from it here, inside the actor
            (a live client cannot be shipped across processes).
        data_dir: the data directory (the openai client keeps its reply cache there).
    """

    def __init__(self, model: ModelSettings, data_dir: Path | None = None) -> None:
        self.client: ModelClient = make_client(model, data_dir)

    @classmethod
    def with_client(cls, client: ModelClient) -> InvestigatorService:
        """An in-process service over a ready client (tests and ``Runtime(use_ray=False)``)."""
        svc = cls.__new__(cls)
        svc.client = client
        return svc

    def ping(self) -> str:
        return self.client.name

    def purge_cache(self, texts: Sequence[str]) -> int:
        """Erase purged texts from this worker's reply cache, on the node it runs on (forget --purge)."""
        from actors.llm.response_cache import purge_client_cache

        return purge_client_cache(self.client, texts)

    def investigate(
        self,
        signal: RepairSignal,
        tools: LogTools,
        budget_calls: int = DEFAULT_BUDGET_CALLS,
        budget_chars: int = DEFAULT_BUDGET_CHARS,
    ) -> Investigation:
        """Read the log before the signal within the budget, propose memories, keep the grounded ones.

        A spent budget ends the investigation early (``stopped`` says why); proposals made
        from what was read so far are still checked. Model errors from a delegated client
        propagate, so the job that runs this can retry.
        """
        log = BudgetedLog(tools, signal.bound_turn, budget_calls, budget_chars)
        stopped = ""
        proposals: list[Candidate] = []
        delegate = getattr(self.client, "investigate", None)
        try:
            if self.client.name == "rules":
                proposals, stopped = _RulesInvestigator(self.client, signal, log).run()
            elif callable(delegate):
                found = delegate(signal, log)
                stopped = str(getattr(self.client, "last_stopped", "") or "")
                proposals = [
                    c.model_copy(update={"origin": Origin.REPAIR, "prompt_version": c.prompt_version or f"repair-{self.client.name}"})
                    for c in found
                ]
            else:
                stopped = f"the {self.client.name!r} client cannot investigate"
        except BudgetExceeded as exc:  # a delegated investigator that did not stop in time
            stopped = exc.message
        proposals = _dedupe(proposals)
        # The service fetches the cited units itself, outside the investigator's budget and
        # bound, so that a citation of a later or unknown unit is named for what it is.
        ids = list(dict.fromkeys(i for p in proposals for i in p.source_unit_ids))
        cited = {u.id: u for u in tools.units(ids)} if ids else {}
        verdicts: list[ProposalVerdict] = []
        for proposal in proposals:
            grounding = check_proposal(proposal, cited, signal.bound_turn)
            if grounding.ok and asks(proposal.text):  # whoever proposed it, a question is never a fact
                grounding = Grounding(ok=False, reason="a question or request is not a fact")
            verdicts.append(ProposalVerdict(accepted=grounding.ok, reason=grounding.reason))
        return Investigation(
            signal=signal,
            trace=list(log.trace),
            proposals=proposals,
            verdicts=verdicts,
            calls_used=log.calls_used,
            chars_revealed=log.chars_revealed,
            stopped=stopped,
        )


def _dedupe(proposals: list[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out: list[Candidate] = []
    for p in proposals:
        key = normalize_text(p.text)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


class _RulesInvestigator:
    """The deterministic investigation used with the ``rules`` client.

    1. Search the log before the bound for the query's key terms (the store fills an
       all-words search with any-word matches; with no hit, the two longest terms alone).
    2. Rank hits by how many key terms they hold; read the best one's neighbours
       (``window`` radius 1) if the budget allows (a refusal ends the reading).
    3. Run the client's extractor on what was read and keep candidates that share
       enough key terms; if none do, quote the statement sentences with the most key terms.
    """

    def __init__(self, client: ModelClient, signal: RepairSignal, log: BudgetedLog) -> None:
        self.client = client
        self.signal = signal
        self.log = log
        self.terms = key_terms(signal.query)
        # Two shared terms (or all, when fewer): one common word like "tests" is not enough.
        self.needed = min(2, len(self.terms))
        self.pool: dict[str, Unit] = {}
        self.proposals: list[Candidate] = []

    def run(self) -> tuple[list[Candidate], str]:
        """Proposals, and why reading stopped early ("" when it did not)."""
        if not self.terms:
            return [], "the query has no key terms"
        stopped = ""
        try:
            self._read()
        except BudgetExceeded as exc:  # propose from what was read before the budget ran out
            stopped = exc.message
        self._propose()
        return self.proposals, stopped

    def _read(self) -> None:
        hits = self.log.search(" ".join(self.terms), limit=SEARCH_LIMIT, before_turn=self.signal.bound_turn)
        if not hits and len(self.terms) > 1:
            for term in sorted(self.terms, key=len, reverse=True)[:2]:
                hits = self.log.search(term, limit=SEARCH_LIMIT, before_turn=self.signal.bound_turn)
                if hits:
                    break
        ranked = sorted(
            enumerate(hits), key=lambda ih: (-len(shared_terms(self.terms, _text(ih[1].unit))), ih[0])
        )
        for _, hit in ranked:
            self.pool.setdefault(hit.unit.id, hit.unit)
        # No look-ahead at the budget: the log enforces it, and a refused call is in the trace.
        if ranked:
            for unit in self.log.window(ranked[0][1].unit.id, radius=1):
                self.pool.setdefault(unit.id, unit)

    def _units(self) -> list[Unit]:
        return [u for u in self.pool.values() if u.id not in self.log.truncated_ids]

    def _propose(self) -> None:
        units = self._units()
        if not units:
            return
        scored: list[tuple[int, int, Candidate]] = []
        for n, cand in enumerate(self.client.extract(units, self.signal.scope)):
            if cand.update_only:
                continue  # a mention changes a held setting or nothing (engine/mentions.py): no fact to propose
            shared = len(shared_terms(self.terms, f"{cand.text} {cand.key}"))
            if shared >= self.needed:
                scored.append((shared, n, cand))
        if scored:
            best = max(s for s, _, _ in scored)
            self.proposals = [
                c.model_copy(update={"origin": Origin.REPAIR, "prompt_version": REPAIR_PROMPT_VERSION})
                for s, _, c in sorted(scored, key=lambda t: t[1])
                if s == best
            ][:MAX_PROPOSALS]
            return
        if self.signal.kind == "correction":
            # A correction sentence mixes the wrong value with the right one; quoting it would serve
            # both. Only what the extractor understood of it is proposed.
            return
        self.proposals = self._quote(units)

    def _quote(self, units: list[Unit]) -> list[Candidate]:
        """The statement sentences holding the most key terms, as self-contained notes."""
        found: list[tuple[int, int, Unit, str]] = []
        order = 0
        for unit in units:
            for speaker, body in (("user", unit.user), ("assistant", unit.assistant)):
                for sentence in sentences(body):
                    text = _statement(sentence, speaker, self.terms)
                    if text:
                        found.append((len(shared_terms(self.terms, text)), order, unit, text))
                        order += 1
        if not found:
            return []
        best = max(n for n, _, _, _ in found)
        if best < self.needed:
            return []
        return [
            Candidate(
                text=text,
                kind=Kind.NOTE,
                scope=self.signal.scope,
                source_unit_ids=(unit.id,),
                valid_from_ms=unit.ts_ms,
                origin=Origin.REPAIR,
                prompt_version=REPAIR_PROMPT_VERSION,
            )
            for n, _, unit, text in sorted(found, key=lambda f: f[1])
            if n == best
        ][:MAX_PROPOSALS]


def _text(unit: Unit) -> str:
    return f"{unit.user}\n{unit.assistant}"


def _statement(sentence: str, speaker: str, terms: list[str]) -> str:
    """A sentence cleaned into a stand-alone statement, or "" for questions, plans and memory talk."""
    if asks(sentence) or MEMORY_TALK.search(sentence):
        return ""
    sentence = unwrap(sentence)
    if len(sentence) > MAX_SENTENCE_CHARS:
        parts = clauses(sentence)
        sentence = max(parts, key=lambda p: (len(shared_terms(terms, p)), -len(p))) if parts else ""
    text, changed, _ = strip_fillers(sentence)
    if not text or not is_statement(text, changed):
        return ""
    if speaker == "assistant" and not assistant_ok(text):
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!")) else text + "."
