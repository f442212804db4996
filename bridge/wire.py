"""HTTP wire models: one pydantic model per message, ``extra="forbid"``, every field described.

These become the OpenAPI document at ``/openapi.json``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from engine.errors import InvalidInput
from engine.limits import MAX_ASSISTANT_CHARS, MAX_PROJECT_CHARS, MAX_REQUEST_ID_CHARS, MAX_SESSION_CHARS, MAX_USER_CHARS
from engine.scopes import project_scope

PROJECT_PATTERN = r"^[^\x00-\x1f]+$"
PROJECT_DESCRIPTION = "project name (the plugin sends the project directory)"


def valid_project(name: str) -> str:
    """The one project-name rule (engine.scopes), applied at the edge so that no read of a
    badly named project creates stores for it."""
    try:
        project_scope(name)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None
    return name


Project = Annotated[str, AfterValidator(valid_project)]
ProjectField = Field(min_length=1, max_length=MAX_PROJECT_CHARS, pattern=PROJECT_PATTERN, description=PROJECT_DESCRIPTION)


class Body(BaseModel):
    # Numbers and booleans of request bodies are ``strict=True``: JSON ``true`` is not 1 and
    # ``"5"`` is not 5 (the OpenAPI document says "integer", and clients should be told).
    model_config = ConfigDict(extra="forbid", frozen=True)


class ObserveBody(Body):
    project: Project = ProjectField
    session: str = Field(default="default", max_length=MAX_SESSION_CHARS, description="opencode session id")
    user: str = Field(min_length=1, max_length=MAX_USER_CHARS, description="the user's message")
    assistant: str = Field(default="", max_length=MAX_ASSISTANT_CHARS, description="the agent's reply")
    ts: str | None = Field(default=None, description="ISO 8601 time of the turn (default: now; at most 5 minutes "
                                                     "ahead of the server's clock, else 422 future_timestamp)")
    request_id: str | None = Field(default=None, max_length=MAX_REQUEST_ID_CHARS, description="idempotency key")


class ObserveReply(Body):
    unit_id: str = Field(description="id of the logged unit")
    turn: int = Field(description="turn number in the project log")
    created: bool = Field(description="false when this request id was already logged")


class RecallBody(Body):
    project: Project = ProjectField
    query: str = Field(max_length=20_000, description="the prompt or question to recall for")
    k: int | None = Field(default=None, strict=True, ge=1, le=50, description="at most this many memories")
    budget_tokens: int | None = Field(default=None, strict=True, ge=16, le=8192, description="token budget of the block")
    passive: bool = Field(default=False, strict=True, description="change nothing (no credit, no tensions)")
    as_of: str | None = Field(default=None, description="ISO 8601: answer as believed valid then")


class RecalledMemory(Body):
    id: str = Field(description="memory id")
    text: str = Field(description="memory sentence")
    score: float = Field(description="final score")
    state: str = Field(description="trust state (active or contested)")
    scope: str = Field(description="'global' or 'project:<name>'")
    kind: str = Field(description="fact, decision, preference, procedure or note")
    tier: str = Field(default="normal", description="core, normal, temporary or pinned")
    provisional: bool = Field(default=False, description="low confidence; marked unconfirmed")
    always_on: bool = Field(default=False, description="served by the core slot, not by relevance")


class ConflictLine(Body):
    memory_id: str = Field(description="the contested memory")
    rival_id: str = Field(description="the other side of the open tension")
    rival_text: str = Field(description="its text")


class RecallReply(Body):
    retrieval_id: str = Field(description="id to send back with feedback")
    abstained: bool = Field(description="true when nothing relevant passed the gate")
    context: str = Field(description="exactly the block the plugin injects ('' when abstained)")
    memories: list[RecalledMemory] = Field(description="the injected memories, best first")
    conflicts: list[ConflictLine] = Field(description="contested memories and their rival lines")


class FeedbackBody(Body):
    project: Project = ProjectField
    retrieval_id: str = Field(min_length=1, max_length=128, description="from the recall reply")
    answer: str = Field(max_length=400_000, description="the agent's answer")
    request_id: str | None = Field(default=None, max_length=256, description="idempotency key")


class FeedbackReply(Body):
    used: list[str] = Field(description="ids of injected memories the answer used")


class RememberBody(Body):
    project: Project = ProjectField
    text: str = Field(min_length=1, max_length=4000, description="a self-contained sentence")
    scope: Literal["project", "global"] = Field(default="project", description="project or global")
    tier: Literal["core", "normal", "temporary", "pinned"] = Field(default="normal", description="core is always on")
    ttl_hours: float | None = Field(default=None, strict=True, gt=0, le=24 * 365 * 10, description="expire after this many hours")
    sensitivity: Literal["normal", "local-only"] = Field(default="normal", description="local-only never reaches a model")
    request_id: str | None = Field(default=None, max_length=256, description="idempotency key")


class RememberReply(Body):
    memory_ids: list[str] = Field(description="the memory created or confirmed")
    outcomes: dict[str, int] = Field(description="what ingest did")


class MemoryOut(Body):
    id: str = Field(description="memory id")
    text: str = Field(description="sentence")
    state: str = Field(description="trust state")
    pool: str = Field(description="C, M or A")
    kind: str = Field(description="kind")
    tier: str = Field(description="tier")
    scope: str = Field(description="scope")
    key: str = Field(description="belief key")
    evidence: int = Field(description="number of confirmations")
    valid_from_ms: int = Field(description="valid from (evidence time)")
    valid_to_ms: int | None = Field(description="valid until, if retired")
    sensitivity: str = Field(description="normal or local-only")
    belief: str = Field(default="", description="normalised value asserted for the key")
    fingerprint: str = Field(default="", description="hash of the normalised value within its scope")
    value: float = Field(default=0.0, description="value-dynamics score V at value_step")
    value_step: int = Field(default=0, description="engine step of value")
    conf_for: float = Field(default=1.0, description="confidence: Beta count for")
    conf_against: float = Field(default=1.0, description="confidence: Beta count against")
    source_unit_ids: list[str] = Field(default_factory=list, description="log units it came from")
    last_evidence_ms: int = Field(default=0, description="time of the latest evidence")
    recorded_at_ms: int = Field(default=0, description="when it was written (transaction time)")
    retired_at_ms: int | None = Field(default=None, description="when it was retired (transaction time)")
    expires_at_ms: int | None = Field(default=None, description="TTL expiry")
    created_step: int = Field(default=0, description="engine step at creation")
    last_hit_step: int = Field(default=0, description="engine step of the last hit")
    origin: str = Field(default="extractor", description="who proposed it")
    prompt_version: str = Field(default="", description="prompt or rules version that produced it")
    superseded_by: str | None = Field(default=None, description="the memory that replaced it")
    negated: bool = Field(default=False, description="asserts that its value no longer holds")
    purged: bool = Field(default=False, description="text erased")


class MemoryList(Body):
    memories: list[MemoryOut] = Field(description="memories, newest first")


class PatchBody(Body):
    tier: Literal["core", "normal", "temporary", "pinned"] | None = Field(default=None, description="new tier")
    sensitivity: Literal["normal", "local-only"] | None = Field(default=None, description="new sensitivity")


class ForgetReply(Body):
    retired: list[str] = Field(description="retired memory ids")
    purged: bool = Field(description="whether text and source turns were erased")


class ReviewDecisionBody(Body):
    project: Project = ProjectField
    decision: Literal["accept_new", "keep_old", "keep_both", "retract_both"] = Field(description="how to settle the conflict")
    note: str = Field(default="", max_length=2000, description="why; for keep_both, the scope or condition that separates them")
    request_id: str | None = Field(default=None, max_length=256, description="idempotency key")


class MissBody(Body):
    project: Project = ProjectField
    query: str = Field(min_length=1, max_length=20_000, description="what memory failed to answer")
    tool: str = Field(default="", max_length=64, description="the tool that signalled the miss")
    session: str = Field(default="", max_length=256, description="session id")


class MissReply(Body):
    job_id: int | None = Field(description="the repair job (null when an identical one is already queued)")


class LogSearchBody(Body):
    project: Project = ProjectField
    # no NUL: SQLite's FTS5 query parser ends a string at NUL ("unterminated string")
    query: str = Field(min_length=1, max_length=2000, pattern=r"^[^\x00]*$", description="words to find in the log")
    limit: int = Field(default=10, strict=True, ge=1, le=100, description="at most this many hits")


class LogTimelineBody(Body):
    project: Project = ProjectField
    # le: SQLite integers are 64-bit, and the plugin's JavaScript numbers are exact below 2**53
    around_turn: int | None = Field(default=None, strict=True, ge=1, le=2**53 - 1, description="centre on this turn (default: latest)")
    limit: int = Field(default=20, strict=True, ge=1, le=200, description="at most this many turns")


class LogWindowBody(Body):
    project: Project = ProjectField
    unit_id: str = Field(min_length=1, max_length=64, description="the unit at the centre")
    radius: int = Field(default=2, strict=True, ge=0, le=50, description="turns either side")


class UnitOut(Body):
    id: str = Field(description="unit id")
    turn: int = Field(description="turn number")
    session: str = Field(description="session id")
    ts_ms: int = Field(description="time of the turn")
    user: str = Field(description="user text (redacted)")
    assistant: str = Field(description="assistant text (redacted)")
    snippet: str | None = Field(default=None, description="search snippet")


class UnitList(Body):
    units: list[UnitOut] = Field(description="log units")


class ErrorReply(Body):
    error: str = Field(description="what went wrong, in one sentence")
    code: str = Field(description="stable error code")


class Health(Body):
    ok: bool = Field(description="always true when answering")
    version: str = Field(description="dynamics-memory version")


class ScoreTermsOut(Body):
    """Every term of a memory's score for one query (engine.retrieval.ScoreTerms)."""

    cos: float = Field(description="cosine between query and memory")
    lex: float = Field(description="normalised BM25 in [0, 1]")
    w_lex_x_lex: float = Field(description="w_lex * lex")
    pool_prior: float = Field(description="ranking prior of its pool (M +0.05, C 0, A -0.30)")
    freshness: float = Field(description="freshness in [0, 1]")
    alpha_x_freshness: float = Field(description="alpha * freshness")
    tier_bonus: float = Field(description="bonus of its tier")
    gate: float = Field(description="cos + w_lex*lex, compared with theta (pools and tiers only rank)")
    anchored: bool = Field(default=False, description="passed the gate on lexical evidence (lex >= lex_anchor and "
                                                      "cos >= anchor_min_cos) though gate < theta")
    shaped: bool = Field(default=False, description="let in under the gate by the shape of value the question asks for "
                                                    "(shape_anchor: which port, how often, where...), after every "
                                                    "candidate that passed otherwise")
    score: float = Field(description="final ranking score")
    value: float = Field(description="value-dynamics score V")
    confidence: float = Field(description="Beta-count confidence")


class AuditEventOut(Body):
    memory_id: str = Field(description="the memory changed")
    action: str = Field(description="create, confirm, promote, demote, archive, supersede, contest, uncontest, "
                                    "review, retract, purge, expire, absorb, merge")
    actor: str = Field(description="who: extractor, judge, agent, human, system, repair")
    reason: str = Field(description="why")
    evidence: list[str] = Field(default_factory=list, description="log units behind the change")
    request_id: str = Field(default="", description="idempotency key of the request that caused it")
    at_ms: int = Field(description="when (epoch ms)")
    from_state: str = Field(default="", description="trust state before")
    to_state: str = Field(default="", description="trust state after")
    detail: str = Field(default="", description="extra detail")


class AuditRow(AuditEventOut):
    id: int = Field(description="event id (for since_id paging)")


class AuditList(Body):
    events: list[AuditRow] = Field(description="audit events, oldest first")


class WhyReply(Body):
    memory: MemoryOut = Field(description="the memory")
    why: ScoreTermsOut | None = Field(description="score terms for the query; null when it is not eligible for recall")
    history: list[AuditEventOut] = Field(description="its audit trail")
    versions: list[MemoryOut] = Field(description="every version of its belief key, oldest first")


class MemoryDetailReply(Body):
    memory: MemoryOut = Field(description="the memory")
    history: list[AuditEventOut] = Field(description="its audit trail")
    versions: list[MemoryOut] = Field(description="every version of its belief key, oldest first")


class ConflictOut(Body):
    tension_id: str = Field(description="tension id")
    reason: str = Field(description="how it was found: key, cosine or suppression")
    verdict: str | None = Field(description="verdict so far, if any")
    a: MemoryOut = Field(description="one side")
    b: MemoryOut = Field(description="the other side")


class ConflictList(Body):
    conflicts: list[ConflictOut] = Field(description="open tensions between memories")


class ReviewOut(Body):
    id: str = Field(description="review id")
    tension_id: str = Field(description="the tension it settles")
    scope: str = Field(description="scope of the memories")
    status: str = Field(description="open or decided")
    decision: str = Field(default="", description="accept_new, keep_old, keep_both or retract_both once decided")
    decided_by: str = Field(default="", description="human or agent")
    reason: str = Field(default="", description="the decider's note")
    created_ms: int = Field(description="when it was filed")
    decided_ms: int | None = Field(default=None, description="when it was decided")
    memories: list[MemoryOut] = Field(description="the memories in conflict")


class ReviewList(Body):
    reviews: list[ReviewOut] = Field(description="reviews, newest first")


class ReviewDecisionReply(Body):
    review_id: str = Field(description="the review settled")
    decision: str = Field(description="the decision applied")
    decided_by: str = Field(description="human (review token) or agent (API token, when allowed)")
    memories: list[MemoryOut] = Field(description="the memories after the decision")


class JobCounts(Body):
    jobs: dict[str, dict[str, int]] = Field(description="job counts by kind, then by state (pending, running, done, dead)")


class StatsReply(Body):
    project: str = Field(description="the project")
    memories_by_state: dict[str, int] = Field(description="memories per trust state")
    memories_by_pool: dict[str, int] = Field(description="memories per pool (C, M, A)")
    open_tensions: int = Field(description="tensions waiting for a verdict")
    step: int = Field(description="engine step counter")
