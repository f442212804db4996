"""Frozen settings: the one source of every default, with what it does and why it has its value.

``configs/default.toml`` is generated from these models (``python -m engine.settings >
configs/default.toml``; tests/engine/test_settings.py fails when the two differ). The loader
(that file, a ``--config`` override, ``DYNMEM_<SECTION>_<KEY>`` environment) lives in
``actors/config.py``; the engine only sees the resulting frozen models.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")


def setting(default: T, description: str, reason: str, *, env_only: bool = False, **constraints: Any) -> T:
    """A field with its default, what it does (``description``) and why it has that value (``reason``).

    ``env_only`` settings (secrets) never appear in the generated TOML and may not be set in a file.
    """
    extra: dict[str, Any] = {"reason": reason}
    if env_only:
        extra["env_only"] = True
    return cast(T, Field(default, description=description, json_schema_extra=extra, **constraints))


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DynamicsSettings(_Section):
    """Value dynamics of the memory pools (DESIGN §4): V <- V*exp(-lam) + eta*hit + eta_s*shadow."""

    lam: float = setting(0.02, "per-step decay of a memory's value V", "DESIGN §4 (original Dynamics-memory design)")
    eta: float = setting(0.30, "credit added to V for a hit (an injected memory the answer used)", "DESIGN §4")
    eta_s: float = setting(0.10, "credit added to V for a shadow hit (injected, use unknown)",
                           "DESIGN §4: a third of a hit, since the use is not known")
    v_init: float = setting(0.5, "value V of a new memory", "DESIGN §4")
    theta_p: float = setting(1.5, "V above which a candidate (C) memory is promoted to the main pool (M)",
                             "DESIGN §4")
    theta_d: float = setting(0.8, "V below which a main-pool (M) memory is demoted to C",
                             "DESIGN §4: below theta_p, so that a memory does not flap between pools (hysteresis)")
    m_cap: int = setting(8, "memories in the main pool M at most; the weakest is demoted when full", "DESIGN §4")
    c_cap: int = setting(200, "memories in the candidate pool C at most; the oldest go to the archive A", "DESIGN §4")
    a_cap: int = setting(2000, "memories in the archive pool A at most (not enforced yet)", "DESIGN §4")
    idle_archive: int = setting(50, "steps without a hit after which a C memory moves to the archive A", "DESIGN §4")
    conf_half_life_steps: int = setting(200, "half-life, in engine steps, of a memory's confidence counts",
                                        "DESIGN §4 (confidence decays with a half-life)")


class IngestSettings(_Section):
    """How a new candidate meets the known memories (DESIGN §4, Ingest)."""

    tau_dup: float = setting(0.85, "cosine above which a candidate with a different value is a tension to adjudicate",
                             "DESIGN §4")
    tombstones: bool = setting(True, "a retired memory's fingerprint absorbs a candidate that cites no newer evidence",
                               "DESIGN §4: a retracted or superseded memory is never resurrected by old evidence")
    tau_key: float = setting(
        0.80, "cosine between two keys of the same kind above which a new key is read as the known one (above 1.0: off)",
        "on the key pairs of tests/engine/test_keys.py different subjects of one kind reach at most 0.70 and "
        "paraphrases 0.83-0.95 (some, 'backend port' 0.66, stay apart: a miss, not a wrong merge)")


class RetrievalSettings(_Section):
    """The recall hot path (DESIGN §4, Retrieval): shortlist, gate, suppression, budget."""

    shortlist: int = setting(30, "candidates taken from each of the FAISS and BM25 shortlists", "DESIGN §4")
    k: int = setting(5, "memories injected at most per recall (besides core and pinned ones)", "DESIGN §4")
    core_slots: int = setting(3, "always-on core and pinned memories per recall at most", "DESIGN §4")
    max_rival_lines: int = setting(3, "rival lines of contested memories per recall at most", "DESIGN §4")
    budget_tokens: int = setting(256, "token budget of the injected block",
                                 "DESIGN §4: the block rides on every prompt, so it stays small")
    theta: float = setting(0.35, "relevance gate on cosine plus w_lex * lex (pools and tiers only rank): nothing "
                           "below is injected unless lexically anchored, or let in by person_anchor, key_anchor or "
                           "shape_anchor (else the recall abstains)", "DESIGN §4")
    lex_anchor: float = setting(
        0.30, "normalised BM25 score at or above which a candidate passes the gate whatever its cosine sum, if its "
        "cosine is at least anchor_min_cos (0: off)", "the embedder scores a question against the statement that "
        "answers it at cosine 0.2-0.3; the query's rare words in the memory are evidence the cosine misses. Chosen "
        "on the development histories alpha and beta (eval/results/independent-*); a word most memories share "
        "weighs little in BM25 and anchors nothing")
    anchor_min_cos: float = setting(0.20, "cosine a candidate let in under theta needs at least (lexical anchor, "
                                    "person_anchor, shape_anchor; key_anchor has its own)",
                                    "below it a shared rare word is a coincidence of names; chosen as lex_anchor")
    tau_sim: float = setting(0.78, "cosine to an already selected memory above which a candidate is suppressed",
                             "DESIGN §4 (original sidecar setting)")
    w_lex: float = setting(0.15, "weight of the BM25 lexical score in the ranking score",
                           "DESIGN §4: tuned on the benchmarks")
    alpha: float = setting(0.10, "weight of freshness in the ranking score", "DESIGN §4")
    freshness_half_life_days: float = setting(30.0, "age in days at which freshness is one half (0: no freshness)",
                                              "not tuned: a month, as a project's facts change over weeks")
    pool_prior_m: float = setting(0.05, "ranking prior of a main-pool (M) memory", "DESIGN §4 (pools rank, never gate)")
    pool_prior_c: float = setting(0.0, "ranking prior of a candidate-pool (C) memory", "DESIGN §4")
    pool_prior_a: float = setting(-0.30, "ranking prior of an archived (A) memory", "DESIGN §4")
    tier_bonus_core: float = setting(0.05, "score bonus of a core memory", "the size of the M prior: core is chosen as M")
    tier_bonus_pinned: float = setting(0.05, "score bonus of a pinned memory", "as tier_bonus_core")
    provisional_below: float = setting(0.5, "confidence below which an injected line is marked provisional",
                                       "even odds: below it, the evidence against outweighs the evidence for")
    person_anchor: bool = setting(
        True, "a question asking for a person (who, whom, whose) lets in a memory of who owns or holds the thing it "
        "names (key kind owner, one of the key's other words in the query) when its cosine is at least anchor_min_cos",
        "the embedder scores 'who maintains X?' against 'Dana owns X' at 0.2-0.3, under theta; the answer's kind "
        "and the thing named are the evidence. Development histories (issue 11, session 18)")
    key_anchor: bool = setting(
        True, "a memory whose key names its subject in words the question uses (all of them, inflections folded: "
        "'linter name' for 'what linter guards the repo?') is let in when its cosine is at least key_anchor_min_cos, ranked "
        "after every candidate that passed otherwise and never hiding one as its later value",
        "a labelled line ('CI: GitLab CI') or a reading ('test command') says what it is about in its key, which the "
        "embedder scores against a casual question at 0.25-0.3, under theta. Measured in session 24 (RULES_LIMITS.md)")
    key_anchor_min_cos: float = setting(
        0.15, "cosine a memory let in by key_anchor needs at least (its key's words, all named by the question, are "
        "the evidence; a key of one word names its subject alone: 'partition')",
        "the embedder scores a question naming a key's subject against the memory at 0.15-0.2 as often as at 0.2-0.3. "
        "Measured in session 25 on the independent histories: development +3 gold, held out +2, no more wrong questions "
        "(RULES_LIMITS.md)")
    shape_anchor: bool = setting(
        True, "a question asking for a value of a shape by its form (which port, which version, how often, when, where, "
        "how do I run...) lets in a memory holding a value of that shape when its cosine is at least anchor_min_cos, "
        "ranked after every candidate that passed the gate otherwise and never hiding one as its later value",
        "the embedder scores 'how often does the job run?' against 'it runs every 20 minutes' at 0.2-0.3, under theta. "
        "Measured (issue 11, session 21) on the recall-only set written by four helpers (eval/results/qa.notes.md): "
        "parts 1-3 notes injected 79.8 -> 82.2 % for false positives 82.6 -> 85.8 % (part 1: 67.7 -> 75.0 %); held-out "
        "part 4 87.8 -> 90.1 % for 83.3 -> 84.4 %; theta 0.25 instead gives 90.5 % for 96.4 % (all parts). Development "
        "histories 160 -> 162 gold, held out 120 -> 121, no more wrong questions; peers unchanged; TIDE held out "
        "seed 7 0.326 -> 0.333, seed 13 one more stale value injected (harmful 8.8 -> 9.4 %: a place asked for, its "
        "change never read)")
    slot_recency: bool = setting(
        True, "of two memories that answer a recall with different values of one shape (a port, a version, a time...), "
        "serve only the later one", "a later statement of a value is the current one, whatever words either used")
    slot_min_cos: float = setting(0.45, "cosine between two such memories above which they are about the same thing",
                                  "measured on the development histories alpha, beta, eta, theta, iota (issue 11, "
                                  "session 15): default profile 107 -> 111 of 324 gold values at 0.45 with no more "
                                  "wrong questions (0.35: 109; 0.55: 114 but 2 more wrong); at 0.25 a junk port "
                                  "or a staging host hid the answer behind a memory about something else")
    credit_fsync: bool = setting(
        False, "wait for the disk (fsync) when a live recall commits what it records (shadow credit, its receipt, "
        "tensions found by suppression and their adjudicate jobs); off: the commit survives a crash of the process "
        "(kill -9) but not of the machine, until the next fsynced commit of the store",
        "the fsync was most of a live recall after the query embedding (about 6 of 8 ms at 1k memories, "
        "issue 15); nothing of it was acknowledged to a caller, a lost shadow credit changes a value a little and a "
        "lost suppression tension is found again at the next suppression of the pair, while observes, ingests, "
        "verdicts, reviews and forgets are always fsynced")
    slot_margin: float = setting(0.15, "how much less relevant to the recall the later memory may be and still win",
                                 "measured on the development histories alpha and beta")
    slot_close_cos: float = setting(
        0.7, "cosine between a later stated change (kind decision) and an older memory of another value of one shape "
        "above which the change hides it however much less relevant to the recall its wording is (no slot_margin)",
        "an assistant's report of a change it made ('Updated `config.ts`: staging now points at api2.x.dev') scores "
        "lower against the question than the statement it replaces (the measured case: 0.57 against 0.80, the pair "
        "0.73 apart). eval/results/keys-by-meaning.md: 42 % of same-subject pairs of statements reach 0.7, 0 % of "
        "other-subject pairs in two templates, but 24 % of other-subject pairs in one template, hence a stated change "
        "with a value of the same shape only. Development, held-out histories and TIDE (both variants) unchanged "
        "(issue 11, session 23)")
    slot_change_min_cos: float = setting(
        0.45, "cosine above which a later stated change (kind decision) hides an older memory with no reading key "
        "when no value shape is shared (names, plain words)",
        "higher than slot_min_cos: nothing but meaning says the two are one setting; measured on the development "
        "histories alpha, beta, eta, theta (issue 11, session 28): no gold lost at 0.45 or 0.50, 2 fewer wrong questions "
        "at 0.45, 1 at 0.50")


class ModelSettings(_Section):
    """The model client of extraction, judging and repair (DESIGN §5, §11)."""

    client: str = setting(
        "rules", "model client: 'rules' (offline, deterministic) or 'openai' (any OpenAI-compatible endpoint)",
        "works offline with no model; DYNMEM_MODEL_CLIENT switches it")
    extraction_profile: Literal["developer", "extractive", "conversation"] = setting(
        "developer", "what the rules client extracts: a code base's decisions and facts (developer, extractive) or "
        "a person's life, plans and events (conversation)", "the project serves coding agents first")
    openai_base_url: str = setting("", "base URL of the endpoint, ending in /v1 (DYNMEM_OPENAI_BASE_URL)",
                                   "no endpoint is assumed")
    openai_model: str = setting("", "chat model of every task (DYNMEM_OPENAI_MODEL)", "no model is assumed")
    openai_api_key: str = setting("", "API key of the endpoint; only from DYNMEM_OPENAI_API_KEY",
                                  "a key in a file ends up in backups, dotfile repos and bug reports",
                                  env_only=True, repr=False)
    extract_model: str = setting("", "model of extraction; empty: openai_model", "one model serves every task by default")
    judge_model: str = setting("", "model of the judge of tensions; empty: openai_model", "as extract_model")
    classify_model: str = setting("", "model of classification; empty: openai_model", "as extract_model")
    recognize_model: str = setting("", "model of recognition; empty: openai_model", "as extract_model")
    structured: Literal["auto", "json_schema", "json_object"] = setting(
        "auto", "structured output: auto (json_schema, falls back to json_object on HTTP 400/422), json_schema or "
        "json_object", "not every OpenAI-compatible server supports json_schema")
    timeout_s: float = setting(30.0, "seconds per request", "raise it for slow local models", gt=0)
    max_output_tokens: int = setting(1024, "max_tokens of every chat request",
                                     "bounds a reply: a small local model can ramble", ge=16)
    max_retries: int = setting(3, "retries on 429, 5xx, timeouts and connection errors (the openai package's are off)",
                               "not tuned: three retries span 0.5 + 1 + 2 s of backoff", ge=0)
    retry_base_s: float = setting(0.5, "first backoff in seconds, doubled per retry, jittered",
                                  "the openai package's initial retry delay (0.5 s)", ge=0)
    retry_max_s: float = setting(30.0, "cap on one wait in seconds, Retry-After included", "as timeout_s", ge=0)
    max_concurrency: int = setting(4, "requests in flight per client (each extraction worker has one)",
                                   "not tuned: a few requests in flight keep one endpoint busy", ge=1)
    rate_limit_per_min: int = setting(0, "requests a minute per client (token bucket); 0: unlimited",
                                      "local servers need no limit", ge=0)
    cache_dir: str = setting("", "folder of the response cache; empty: <data-dir>/cache", "next to the data it serves")
    cache_max_mb: float = setting(64.0, "size of the response cache in MB; 0 disables it",
                                  "not tuned: thousands of replies of a few KB", ge=0)
    breaker_failures: int = setting(5, "consecutive failed requests that open the circuit",
                                    "more than max_retries: one bad request does not open it", ge=1)
    breaker_cooldown_s: float = setting(30.0, "seconds the circuit stays open (also how long a job waits)",
                                        "as timeout_s", ge=0)


class EmbedderSettings(_Section):
    """The sentence embedder of memories and queries."""

    name: str = setting("minilm", "embedder: minilm (bundled), openai (the [model] endpoint's /v1/embeddings) or hash "
                        "(tests only); DYNMEM_EMBEDDER", "works offline, 384 dimensions")
    batch_size: int = setting(16, "texts per embedding batch", "measured faster than 32 on 2 cores "
                              "(eval/results/embedders.md)")
    openai_model: str = setting("", "embedding model of the [model] endpoint when name = 'openai'",
                                "no model is assumed")
    dim: int = setting(384, "vector width asked of (and checked on) the openai embedder; the index is built at it",
                       "the width of the bundled MiniLM", ge=1)
    query_cache_size: int = setting(1024, "query vectors kept by normalised text (LRU); 0: off",
                                    "agents repeat queries; 1024 vectors of 384 floats are 1.5 MB", ge=0)
    backend: Literal["auto", "onnx", "numpy"] = setting(
        "auto", "forward pass of the bundled MiniLM: onnx (ONNX Runtime), numpy, or auto (onnx when it imports)",
        "same vectors either way; ONNX Runtime is about twice as fast (eval/results/embed-onnx.md)")
    threads: int = setting(2, "threads of one ONNX Runtime forward pass (the numpy pass uses BLAS threads)",
                           "one per core of a 2-core machine: 1.6x the texts/s of one thread, same query latency "
                           "(eval/results/embed-onnx.md)",
                           ge=1, le=64)
    local_name: str = setting("minilm", "embedder of local-only memories (and their half of each query) when name is "
                              "remote: minilm or hash (tests only)", "a local-only text never reaches an endpoint "
                              "(DESIGN §9)")


class ReviewSettings(_Section):
    """Who settles a contradiction."""

    allow_agent: bool = setting(False, "may the agent (API token) decide conflicts? audited as the agent's decision",
                                "conflicts are settled by a person (review token) by default")


class RepairSettings(_Section):
    """The repair loop: investigations of missed recalls (DESIGN §6)."""

    budget_calls: int = setting(8, "log tool calls per investigation, enforced by the service", "DESIGN §6")
    budget_chars: int = setting(4000, "characters of log text revealed per investigation", "DESIGN §6")
    daily_cap: int = setting(50, "repair jobs created per project per 24 hours", "bounds model spend on a busy project")
    on_abstain: bool = setting(True, "a live recall that abstained on a question the log can answer is a miss",
                               "an abstention the log could have answered is the miss repair exists for")


class RuntimeSettings(_Section):
    """The actor graph and the sidecar."""

    extraction_workers: int = setting(2, "extraction actors in the pool at least (the elastic pool's minimum)",
                                      "one per core of a 2-core machine", ge=1)
    extraction_workers_max: int = setting(8, "extraction actors at most; the pool grows from the job backlog",
                                          "a model endpoint answers in 0.3-3 s, so throughput is bound by requests "
                                          "in flight, not by cores", ge=1)
    extraction_num_cpus: float = setting(0.0, "CPUs each extraction worker asks of Ray",
                                         "0 on a laptop; > 0 on an autoscaling cluster, so that workers the cluster "
                                         "cannot place yet are resource demand the autoscaler sees", ge=0)
    background_nice: int = setting(10, "nice levels by which model-work actors (extraction, judging, repair) lower their "
                                   "process priority; 0: same priority as the rest",
                                   "on a small machine, background extraction must not slow the agent's recalls and "
                                   "observes (issue 17: p99 under 50 clients)", ge=0, le=19)
    data_node: str = setting("", "Ray node id that holds the data directory (actors owning files are pinned there); "
                             "empty: the node of the process that opens the data directory",
                             "SQLite files must be written on the node whose disk holds them")
    ray_address: str = setting("", "Ray cluster to join; empty: an embedded local Ray (RAY_ADDRESS also works)",
                               "a single machine needs no cluster")
    lease_s: float = setting(60.0, "seconds after which a leased job not finished (its worker died) is picked up again",
                             "twice the model's timeout_s")
    idle_release_s: float = setting(900.0, "seconds without a call after which a project's log and engine actors are "
                                    "released (they come back on demand)", "each project costs two actors (~77 MB "
                                    "each on Ray, FACTS.md)")
    max_live_projects: int = setting(32, "projects with live actors at once; the least recently used go first",
                                     "bounds memory at about 5 GB of project actors (FACTS.md: ~77 MB per actor)")
    evict_grace_s: float = setting(30.0, "seconds a project stays live after its last call even past max_live_projects "
                                   "(it goes at the next call or sweep after that)",
                                   "a caller may still hold its clients: an observe in flight must never find its "
                                   "log closed (with a cap of 1 it did, issue 17)", ge=0)
    idle_stop_min: float = setting(30.0, "minutes without a request after which the sidecar stops itself; 0: never",
                                   "an idle sidecar holds ~940 MiB of Ray (FACTS.md)", ge=0)


class AdmissionSettings(_Section):
    """Admission control of the sidecar (bridge/admission.py): bounded work, a clear 503 refusal."""

    recall_inflight: int = setting(4, "recalls served at once", "a project's engine answers one recall at a time, so "
                                   "more in flight would only queue inside Ray", ge=1)
    recall_queue: int = setting(8, "recalls waiting for a slot at most", "twice the slots: a short burst waits, a "
                                "flood is refused", ge=0)
    recall_max_wait_s: float = setting(0.15, "seconds a recall waits for a slot before it is refused",
                                       "the agent's prompt waits for the recall; past this, no memory beats late memory",
                                       ge=0)
    observe_inflight: int = setting(8, "observes taken at once (they are written together, one commit per batch)",
                                    "a few in flight fill a group-commit batch", ge=1)
    observe_queue: int = setting(16, "observes waiting for a slot at most", "twice the slots", ge=0)
    observe_max_wait_s: float = setting(0.1, "seconds an observe waits for a slot before it is refused",
                                        "a refused turn stays in the plugin's outbox and is sent again", ge=0)
    foreground_quiet_s: float = setting(
        0.2, "seconds without a recall or observe in flight before the sidecar's background worker starts a step "
        "(extraction, judging, repair)", "an agent's calls come in bursts (observe the turn, recall for the next, a "
        "tool's search), and a call that arrives during a background step waits for the engine behind it (issue 15)",
        ge=0)
    observe_max_pending: int = setting(2048, "observes waiting to be written; past this many, 503 overloaded",
                                       "bounds the sidecar's memory if the log's disk stalls", ge=1)


class Settings(_Section):
    dynamics: DynamicsSettings = DynamicsSettings()
    ingest: IngestSettings = IngestSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    model: ModelSettings = ModelSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    review: ReviewSettings = ReviewSettings()
    repair: RepairSettings = RepairSettings()
    runtime: RuntimeSettings = RuntimeSettings()
    admission: AdmissionSettings = AdmissionSettings()


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for every text a default holds
    raise TypeError(f"no TOML form for {value!r}")


def field_reason(section: type[BaseModel], name: str) -> str:
    """The reason recorded for a setting's default ('' when it has none)."""
    extra = section.model_fields[name].json_schema_extra
    return str(extra.get("reason", "")) if isinstance(extra, dict) else ""


def env_only(section: type[BaseModel], name: str) -> bool:
    """Whether a setting comes from the environment only (a secret)."""
    extra = section.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and bool(extra.get("env_only"))


def default_toml() -> str:
    """``configs/default.toml``: every default of :class:`Settings`, each with its description and reason."""
    lines = ["# dynamics-memory defaults. Generated from engine/settings.py; do not edit by hand:",
             "#   python -m engine.settings > configs/default.toml",
             "# Override with --config FILE, then DYNMEM_<SECTION>_<KEY> (README: Settings)."]
    for section_name, section_field in Settings.model_fields.items():
        section = cast(type[BaseModel], section_field.annotation)
        lines += ["", f"[{section_name}]", f"# {(section.__doc__ or '').strip()}"]
        defaults = section()
        for name, field in section.model_fields.items():
            if env_only(section, name):
                continue
            lines.append(f"{name} = {_toml_value(getattr(defaults, name))}  # {field.description}")
            lines.append(f"#   why: {field_reason(section, name)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(default_toml(), end="")
