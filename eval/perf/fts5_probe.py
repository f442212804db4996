"""Probe: SQLite FTS5 as the lexical shortlist, against the compact BM25 index (why FTS5 was not kept).

Run from the repository root::

    .venv/bin/python -m eval.perf.fts5_probe --sizes 1000,10000,100000 --queries 100

FTS5 stores the identifier-aware tokens of ``engine.lexical.tokenize`` (space-joined, with
``tokenchars`` so that ``src/api/main.py`` stays one token) and answers ``"t1" OR "t2" ...``
ordered by its ``bm25()``. Prints the mean ms per query of: the compact index
(``engine.lexical.BM25Index``), FTS5 top 30 by ``bm25()``, FTS5 top 120 (the pool needed to
re-score exactly, since FTS5's IDF differs from ours), and FTS5 counting its matches only.
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from collections.abc import Callable, Sequence

from engine.lexical import BM25Index, tokenize
from eval.perf.synth import memory_texts, queries

_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_./:@+#-'"


def probe(n: int, n_queries: int) -> dict[str, float]:
    texts = [t for t, _ in memory_texts(n)]
    qs = queries(n_queries)
    idx = BM25Index()
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE lex (rowid INTEGER PRIMARY KEY, mid TEXT, tokens TEXT)")
    conn.execute(f"CREATE VIRTUAL TABLE lex_fts USING fts5(tokens, content='lex', content_rowid='rowid', "
                 f"tokenize=\"{_TOKENIZER}\")")
    rows = []
    for i, text in enumerate(texts):
        toks = tokenize(text)
        idx.add_tokens(f"m{i}", toks)
        rows.append((i, f"m{i}", " ".join(toks)))
    conn.executemany("INSERT INTO lex VALUES (?, ?, ?)", rows)
    conn.execute("INSERT INTO lex_fts(lex_fts) VALUES ('rebuild')")

    def match(q: str) -> str:
        return " OR ".join(f'"{t}"' for t in dict.fromkeys(tokenize(q))) or '""'

    def top(limit: int) -> Callable[[str], object]:
        return lambda q: conn.execute("SELECT lex.mid FROM lex_fts JOIN lex ON lex.rowid = lex_fts.rowid "
                                      "WHERE lex_fts MATCH ? ORDER BY rank LIMIT ?", (match(q), limit)).fetchall()

    cases: dict[str, Callable[[str], object]] = {
        "compact_ms": lambda q: idx.search(q, 30), "fts5_top30_ms": top(30), "fts5_top120_ms": top(120),
        "fts5_count_ms": lambda q: conn.execute("SELECT count(*) FROM lex_fts WHERE lex_fts MATCH ?",
                                                (match(q),)).fetchall()}
    out: dict[str, float] = {"size": n}
    for name, fn in cases.items():
        t0 = time.perf_counter()
        for q in qs:
            fn(q)
        out[name] = round((time.perf_counter() - t0) / len(qs) * 1000, 3)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args(argv)
    for n in (int(x) for x in args.sizes.split(",")):
        print(probe(n, args.queries), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
