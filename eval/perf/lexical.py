"""Lexical shortlist cost by store size: the compact BM25 index against the per-document loop it replaced.

Run from the repository root::

    .venv/bin/python -m eval.perf.lexical --sizes 1000,10000,100000 --queries 200

For each size, both indexes are filled with the synthetic memories of ``eval.perf.synth``
(the texts ``dynmem bench perf`` imports) and asked the same queries for a top-30
shortlist; prints build seconds, query p50/p95 (ms) and the Python heap the index holds
(``tracemalloc``), and checks that both return the same ids.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Sequence

from engine.lexical import BM25Index
from eval.perf.bm25_reference import ReferenceBM25
from eval.perf.measure import summarize_ms
from eval.perf.synth import memory_texts, queries


def measure(size: int, n_queries: int, shortlist: int = 30) -> list[dict[str, object]]:
    texts = [t for t, _ in memory_texts(size)]
    qs = queries(n_queries)
    rows: list[dict[str, object]] = []
    answers: list[list[list[str]]] = []
    for name, cls in (("per-document loop (before)", ReferenceBM25), ("compact (after)", BM25Index)):
        tracemalloc.start()
        t0 = time.perf_counter()
        idx = cls()
        for i, text in enumerate(texts):
            idx.add(f"m{i}", text)
        build_s = time.perf_counter() - t0
        heap_mb = tracemalloc.get_traced_memory()[0] / 2**20
        tracemalloc.stop()
        lat, got = [], []
        for q in qs:
            t = time.perf_counter()
            got.append(list(idx.search(q, shortlist)))
            lat.append((time.perf_counter() - t) * 1000)
        answers.append(got)
        s = summarize_ms(lat)
        rows.append({"size": size, "index": name, "build_s": round(build_s, 2), "heap_mib": round(heap_mb, 1),
                     "p50_ms": s["p50_ms"], "p95_ms": s["p95_ms"]})
    rows[-1]["same_answers"] = answers[0] == answers[1]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args(argv)
    print("| size | index | build (s) | heap (MiB) | query p50 (ms) | query p95 (ms) | same ids |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for size in (int(x) for x in args.sizes.split(",")):
        for r in measure(size, args.queries):
            print(f"| {r['size']:,} | {r['index']} | {r['build_s']} | {r['heap_mib']} | {r['p50_ms']:.3f} | "
                  f"{r['p95_ms']:.3f} | {r.get('same_answers', '')} |", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
