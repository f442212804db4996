"""Which part of the held-out variant costs what: ``python -m eval.tide.heldout_ablation --seed 0``.

Each ablation starts from the held-out vocabulary of the seed and puts one shipped part
back (or removes one held-out feature), then runs ``dynmem`` at the pipeline level:

- ``heldout``: the held-out variant as is;
- ``no-aliases``: subjects said formally ("the websocket gateway", not "ws gw");
- ``shipped-questions``: the shipped probe questions (and propagation/secret questions);
- ``shipped-values``: the shipped value pools (tools, versions, people, hosts, paths, secrets);
- ``no-pairs``: no template where only the assistant's reply states the value;
- ``wording-only``: all four at once, so only the held-out sentence wordings differ from shipped.

Diagnostics only (one seed, the streams of ``generate``): the reported benchmark is
``eval/results/tide-pipeline-heldout.md``. Shipped values put back into held-out sentences
can collide with their words (e.g. branch ``integration``), so that row is approximate.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from eval.tide import vocab as shipped
from eval.tide.generator import PAIR, Vocab, generate, vocab_for
from eval.tide.run import evaluate, run_streams

ABLATIONS = ("heldout", "no-aliases", "shipped-questions", "shipped-values", "no-pairs", "wording-only")


def _no_pairs(xs: tuple[str, ...]) -> tuple[str, ...]:
    kept = tuple(x for x in xs if PAIR not in x)
    return kept if len(kept) >= 3 else xs


def ablate(v: Vocab, name: str) -> Vocab:
    parts = {"no-aliases", "shipped-questions", "shipped-values", "no-pairs"} if name == "wording-only" else {name}
    fams = dict(v.families)
    derived = {k: dict(d) for k, d in v.derived.items()}
    out = v
    if "no-aliases" in parts:
        out = dataclasses.replace(out, aliases={})
    if "shipped-questions" in parts:
        fams = {k: dataclasses.replace(f, question=shipped.FAMILIES[k].question) for k, f in fams.items()}
        for k in derived:
            derived[k]["question"] = shipped.DERIVED[k]["question"]
        out = dataclasses.replace(out, secret_question=shipped.SECRET_QUESTION)
    if "shipped-values" in parts:
        fams = {k: dataclasses.replace(f, values=shipped.FAMILIES[k].values) for k, f in fams.items()}
        out = dataclasses.replace(out, secret_services=shipped.SECRET_SERVICES)
    if "no-pairs" in parts:
        fams = {k: dataclasses.replace(f, state=_no_pairs(f.state), change=_no_pairs(f.change)) for k, f in fams.items()}
        out = dataclasses.replace(out, retract=_no_pairs(out.retract), secret_state=_no_pairs(out.secret_state))
    return dataclasses.replace(out, families=fams, derived=derived)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--streams", type=int, default=12)
    p.add_argument("--only", help="comma-separated subset of " + ",".join(ABLATIONS))
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else list(ABLATIONS)
    base = vocab_for("heldout", args.seed)
    for name in names:
        streams = generate(args.seed, args.streams, vocab=ablate(base, name))
        doc = evaluate(streams, run_streams(streams, "dynmem", "pipeline"), seed=args.seed)
        row = {"ablation": name, "seed": args.seed, "ntu": doc["ntu"], "harmful_rate": doc["harmful_rate"],
               "by_dimension_ntu64": {d: v["ntu"]["64"] for d, v in doc["by_dimension"].items()}}  # type: ignore[attr-defined]
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
