"""How well the bundled embedder tells "the same fact, another value" from "another subject".

Two readings of "same fact" were measured on the shipped TIDE templates (eval/tide/vocab.py):

1. key against key ("api port" / "api server port"): the one kept (``ingest.tau_key``); the
   pairs are in tests/engine/test_keys.py.
2. statement against statement with the values masked ("the API listens on VALUE" / "we moved
   the API to VALUE"): rejected, because the same template about two subjects ("we migrated the
   frontend to VALUE" / "... the backend ...") is closer than most paraphrases of one subject.

Run: ``python -m eval.keys.measure [--out DIR]``; prints a markdown table (and writes it to
``DIR/keys-by-meaning.md`` with ``--out``).
"""

from __future__ import annotations

import argparse
import itertools
import random
from pathlib import Path

import numpy as np

from actors.embedder import make_embedder
from eval.tide.vocab import FAMILIES

THRESHOLDS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def _fill(template: str, subject: str) -> str:
    return template.replace("{S}", subject).replace("{v}", "VALUE").replace("{old}", "OLDV")


def pairs(seed: int = 1) -> dict[str, list[tuple[str, str]]]:
    """Masked statement pairs: one subject in two templates; two subjects in two or in one template."""
    rng = random.Random(seed)
    same, other, other_same_template = [], [], []
    for fam in FAMILIES.values():
        subjects = list(fam.instances)[:5]
        for s in subjects[:4]:
            same += [(_fill(a, s), _fill(b, s)) for a in fam.state[:3] for b in fam.change[:3]]
            other += [(_fill(rng.choice(fam.state), s), _fill(rng.choice(fam.change), s2))
                      for s2 in subjects[:4] if s2 != s]
        other_same_template += [(_fill(t, s), _fill(t, s2)) for t in fam.state + fam.change
                                for s, s2 in itertools.combinations(subjects, 2)]
    return {"same subject, two templates": same, "other subject, two templates": other,
            "other subject, one template": other_same_template}


def cosines(embedder: object, items: list[tuple[str, str]]) -> np.ndarray:
    vecs = np.asarray(embedder.embed([t for p in items for t in p]), dtype=np.float32)  # type: ignore[attr-defined]
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return np.einsum("ij,ij->i", vecs[0::2], vecs[1::2])


def report() -> str:
    embedder = make_embedder("minilm")
    rows = ["| pairs (values masked) | n | " + " | ".join(f">= {t}" for t in THRESHOLDS) + " |",
            "|---|---|" + "---|" * len(THRESHOLDS)]
    for name, items in pairs().items():
        cos = cosines(embedder, items)
        rows.append(f"| {name} | {len(items)} | " + " | ".join(f"{(cos >= t).mean():.1%}" for t in THRESHOLDS) + " |")
    return "\n".join([
        "# Keys decided by meaning: statement against statement, values masked",
        "",
        "Share of pairs of masked statements (shipped TIDE templates) whose MiniLM cosine reaches each",
        "threshold. A mechanism that gives a new value the key of a known fact when the masked",
        "statements are close would merge *other subjects said in one template* as often as it finds",
        "paraphrases of one subject, so it was not adopted; keys are compared key against key",
        "(`ingest.tau_key`, tests/engine/test_keys.py).",
        "",
        "Reproduce: `python -m eval.keys.measure --out eval/results`",
        "",
        *rows,
        "",
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write keys-by-meaning.md under this folder")
    args = parser.parse_args()
    text = report()
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "keys-by-meaning.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
