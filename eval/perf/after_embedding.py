"""The CPU cost of an in-process recall after its query embedding, by store size (issue 15).

Run from the repository root::

    .venv/bin/python -m eval.perf.after_embedding --sizes 1000,10000,100000 --queries 200

A real store of 100k memories needs the MiniLM vector of every memory (about ten minutes of
CPU). This bench skips that: the engine's memory table is filled from the synthetic memories
of ``eval.perf.synth`` directly (``MemoryTable.from_records``, the lexical index in one pass)
and the vector index gets the ``hash`` embedder's vectors (cosines from shared words and
trigrams, so the gate, the suppression and the rendering see candidates that pass). Each
query is embedded once before the timed passes (the index keeps query vectors in its LRU),
so a timed recall is what ``dynmem bench perf`` calls "after embedding": FAISS shortlist,
BM25 shortlist, candidate assembly, filters, scoring, gate and rendering.

Per size it prints the process CPU time (``time.process_time``: on a shared machine it moves
much less with the load than wall time) of a passive recall, p50 and p95, the CPU p50 of the
lexical and FAISS shortlists alone, the wall p50, and a digest of every answer (ids, scores,
rendered block), so that a change to the hot path can show it answers the same.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.perf.measure import summarize_ms

PROJECT = "perf-store"
NOW_MS = 1_767_225_600_000 + 200 * 86_400_000  # after every synthetic memory's last evidence (synth.T0 + 200 days)
WARMUP = 20


def build_engine(size: int, folder: Path) -> Any:
    """An engine over ``size`` synthetic memories, with hash vectors in its index (no MiniLM pass)."""
    from actors.clock import FakeClock
    from actors.engine_actor import EngineService
    from actors.index_actor import IndexService
    from engine.settings import EmbedderSettings, Settings
    from engine.state import MemoryTable, record_of
    from eval.perf.synth import make_memories

    settings = Settings()
    index = IndexService(EmbedderSettings(name="hash"))
    engine = EngineService(PROJECT, folder, settings, index, FakeClock(NOW_MS))
    memories = make_memories(PROJECT, size)
    engine.table = MemoryTable.from_records([record_of(m) for m in memories])
    vectors = index.embed([m.text for m in memories])
    index.upsert(engine.scope, [m.id for m in memories], vectors)
    index.wait_for_builds()  # above 50k the index is HNSW, built on a thread: time the one a service settles on
    return engine


def _cpu_ms(fn: Callable[[], object]) -> float:
    c = time.process_time()
    fn()
    return (time.process_time() - c) * 1000.0


def measure(size: int, qs: Sequence[str]) -> dict[str, Any]:
    """Recall CPU and wall times after embedding, for one store size."""
    from actors.wire import RecallRequest
    from engine.scopes import readable_scopes

    with tempfile.TemporaryDirectory(prefix="dynmem-after-embedding-") as tmp:
        t0 = time.perf_counter()
        engine = build_engine(size, Path(tmp))
        build_s = time.perf_counter() - t0
        index = engine.index
        scopes = sorted(readable_scopes(PROJECT))
        shortlist = engine.settings.retrieval.shortlist
        for q in qs[:WARMUP]:
            engine.recall(RecallRequest(project=PROJECT, query=q, passive=True))
        cpu: list[float] = []
        wall: list[float] = []
        lexical: list[float] = []
        faiss: list[float] = []
        digest = hashlib.sha256()
        for q in qs[WARMUP:]:
            vec = index.embed_query(q)  # the query's vector, cached from here on
            faiss.append(_cpu_ms(lambda: index.search(vec, scopes, shortlist)))
            lexical.append(_cpu_ms(lambda: engine.table.lexical.search(q, shortlist)))
            req = RecallRequest(project=PROJECT, query=q, passive=True)
            w, c = time.perf_counter(), time.process_time()
            res = engine.recall(req)
            cpu.append((time.process_time() - c) * 1000.0)
            wall.append((time.perf_counter() - w) * 1000.0)
            digest.update(repr((res.abstained, res.context, [(m.id, m.score) for m in res.memories],
                                [(s.memory_id, s.by_id, s.cosine) for s in res.suppressed])).encode())
        engine.close()
    c50 = summarize_ms(cpu)
    return {"size": size, "build_s": round(build_s, 1), "cpu_p50_ms": c50["p50_ms"], "cpu_p95_ms": c50["p95_ms"],
            "lexical_cpu_p50_ms": summarize_ms(lexical)["p50_ms"], "faiss_cpu_p50_ms": summarize_ms(faiss)["p50_ms"],
            "wall_p50_ms": summarize_ms(wall)["p50_ms"], "answers": digest.hexdigest()[:12]}


def main(argv: Sequence[str] | None = None) -> int:
    from eval.perf.synth import queries

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=200, help="timed queries (after 20 warm-up ones)")
    args = ap.parse_args(argv)
    qs = queries(args.queries + WARMUP)
    print("| size | build (s) | after embedding, CPU p50 (ms) | CPU p95 (ms) | lexical CPU p50 (ms) "
          "| FAISS CPU p50 (ms) | wall p50 (ms) | p50 / smallest size | answers |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    first = 0.0
    for size in (int(x) for x in args.sizes.split(",")):
        r = measure(size, qs)
        first = first or float(r["cpu_p50_ms"])
        print(f"| {size:,} | {r['build_s']} | {r['cpu_p50_ms']:.3f} | {r['cpu_p95_ms']:.3f} | "
              f"{r['lexical_cpu_p50_ms']:.3f} | {r['faiss_cpu_p50_ms']:.3f} | {r['wall_p50_ms']:.3f} | "
              f"{r['cpu_p50_ms'] / first:.2f} | `{r['answers']}` |", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
