"""Frozen settings, loaded once from ``configs/default.toml`` and passed down explicitly.

The loader (file, ``--config`` override, ``DYNMEM_<SECTION>_<KEY>`` environment) lives in
``actors/config.py``; the engine only sees the resulting frozen models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DynamicsSettings(_Section):
    # Defaults from the original Dynamics-memory design (DESIGN §4).
    lam: float = 0.02
    eta: float = 0.30
    eta_s: float = 0.10
    v_init: float = 0.5
    theta_p: float = 1.5
    theta_d: float = 0.8
    m_cap: int = 8
    c_cap: int = 200
    a_cap: int = 2000
    idle_archive: int = 50
    conf_half_life_steps: int = 200


class IngestSettings(_Section):
    tau_dup: float = 0.85  # cosine above which a different value is a tension
    tombstones: bool = True
    # Cosine between two keys of the same kind ("api port" / "api server port") above which a new
    # key is read as the known one, so that a paraphrase supersedes. 0.80: on the key pairs of
    # tests/engine/test_keys.py, different subjects of one kind reach at most 0.70 and paraphrases
    # 0.83-0.95 (some paraphrases, "backend port" 0.66, stay apart: a miss, not a wrong merge).
    # Above 1.0 turns resolution off.
    tau_key: float = 0.80


class RetrievalSettings(_Section):
    shortlist: int = 30
    k: int = 5
    core_slots: int = 3
    max_rival_lines: int = 3
    budget_tokens: int = 256
    theta: float = 0.35  # relevance gate on cosine plus prior
    tau_sim: float = 0.78  # suppression of near-duplicates among the selected
    w_lex: float = 0.15
    alpha: float = 0.10  # freshness weight
    freshness_half_life_days: float = 30.0
    pool_prior_m: float = 0.05
    pool_prior_c: float = 0.0
    pool_prior_a: float = -0.30
    tier_bonus_core: float = 0.05
    tier_bonus_pinned: float = 0.05
    provisional_below: float = 0.5


class ModelSettings(_Section):
    client: str = "rules"  # rules | openai
    # What the offline ``rules`` client extracts: "developer" (decisions, facts, preferences about a
    # code base) or "conversation" (a person's life, plans and events, for assistant-style histories).
    extraction_profile: Literal["developer", "extractive", "conversation"] = "developer"
    openai_base_url: str = ""
    openai_model: str = ""
    openai_api_key: str = Field(default="", repr=False)  # only from DYNMEM_OPENAI_API_KEY
    # Per-task model overrides; empty means ``openai_model``.
    extract_model: str = ""
    judge_model: str = ""
    classify_model: str = ""
    recognize_model: str = ""
    structured: Literal["auto", "json_schema", "json_object"] = "auto"
    timeout_s: float = Field(default=30.0, gt=0)
    max_output_tokens: int = Field(default=1024, ge=16)  # bounds a reply (a small local model can ramble)
    max_retries: int = Field(default=3, ge=0)  # ours; the openai package's own are off
    retry_base_s: float = Field(default=0.5, ge=0)  # first backoff, doubled per retry, jittered
    retry_max_s: float = Field(default=30.0, ge=0)  # cap on one wait, Retry-After included
    max_concurrency: int = Field(default=4, ge=1)  # requests in flight per client
    rate_limit_per_min: int = Field(default=0, ge=0)  # token bucket; 0 = unlimited
    cache_dir: str = ""  # empty: <data-dir>/cache
    cache_max_mb: float = Field(default=64.0, ge=0)  # 0 disables the cache
    breaker_failures: int = Field(default=5, ge=1)  # consecutive failed requests that open it
    breaker_cooldown_s: float = Field(default=30.0, ge=0)  # also how long a job waits when it is open


class EmbedderSettings(_Section):
    name: str = "minilm"  # minilm | openai | hash (tests only)
    batch_size: int = 16
    openai_model: str = ""  # embedding model of the [model] endpoint when name = "openai"
    dim: int = Field(default=384, ge=1)  # vector width asked of (and checked on) the openai embedder
    query_cache_size: int = Field(default=1024, ge=0)  # query vectors kept by normalised text (LRU); 0: off
    # Embeds local-only memories (and their half of each query) when ``name`` is a remote embedder:
    # a local-only text never reaches an endpoint (DESIGN §9). minilm | hash (tests only)
    local_name: str = "minilm"


class ReviewSettings(_Section):
    allow_agent: bool = False  # may the agent (API token) decide conflicts? audited as the agent's decision


class RepairSettings(_Section):
    budget_calls: int = 8  # (DESIGN §6) log tool calls per investigation, enforced by the service
    budget_chars: int = 4000  # (DESIGN §6) characters of log text revealed per investigation
    daily_cap: int = 50  # repair jobs created per project per 24 hours
    on_abstain: bool = True  # a live recall that abstained on a question the log can answer is a miss


class RuntimeSettings(_Section):
    extraction_workers: int = Field(default=2, ge=1)  # the elastic pool's minimum
    extraction_workers_max: int = Field(default=8, ge=1)  # its maximum (grown from the job backlog)
    # CPUs each extraction worker asks of Ray: 0 on a laptop; > 0 on an autoscaling cluster, so
    # that workers the cluster cannot place yet are resource demand the autoscaler sees.
    extraction_num_cpus: float = Field(default=0.0, ge=0)
    # The Ray node id that holds the data directory (actors owning files are pinned there);
    # empty: the node of the process that opens the data directory (the driver).
    data_node: str = ""
    ray_address: str = ""
    lease_s: float = 60.0  # a leased job not finished by then (its worker died) is picked up again
    idle_release_s: float = 900.0  # a project's log and engine actors idle this long are released
    max_live_projects: int = 32  # projects with live actors at once; the least recently used go first
    idle_stop_min: float = Field(default=30.0, ge=0)  # a sidecar without requests stops itself; 0 never


class Settings(_Section):
    dynamics: DynamicsSettings = DynamicsSettings()
    ingest: IngestSettings = IngestSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    model: ModelSettings = ModelSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    review: ReviewSettings = ReviewSettings()
    repair: RepairSettings = RepairSettings()
    runtime: RuntimeSettings = RuntimeSettings()
