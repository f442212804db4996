"""TIDE scoring: token presence, per-probe utility, NTU and clustered bootstrap intervals.

Per probe ``u = S - H``: ``S`` is the share of gold tokens present in the injected block
and ``H`` is 1 when any harmful token (a stale, retracted, deleted, foreign or secret
value) is present. A token counts only where no letter, digit or hyphen touches it, so
gold ``main`` is not found in ``domain`` and ``8080`` not in ``18080``. Probes without gold
(retraction, deletion) have ``S = 0``: they can only lose.

NTU normalises a system between the ``none`` reference (empty block) and the ``oracle``
(block = exactly the gold sentences): ``(U_sys - U_none) / (U_oracle - U_none)`` over the
mean utilities of a probe set; it is undefined (``None``) when the two references tie.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

BUDGETS = (64, 256)


@lru_cache(maxsize=4096)
def _token_re(token: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9-])" + re.escape(token) + r"(?![A-Za-z0-9-])", re.IGNORECASE)


def has_token(text: str, token: str) -> bool:
    """Whether ``token`` occurs in ``text`` with no letter, digit or hyphen touching it."""
    return bool(token) and _token_re(token).search(text) is not None


@dataclass(frozen=True)
class ProbeScore:
    """The score of one probe's block."""

    stream: int
    dimension: str
    s: float
    h: int

    @property
    def u(self) -> float:
        return self.s - self.h


def score_block(block: str, gold: Sequence[str], harmful: Sequence[str]) -> tuple[float, int]:
    """(S, H) of one injected block."""
    s = sum(has_token(block, g) for g in gold) / len(gold) if gold else 0.0
    h = int(any(has_token(block, t) for t in harmful))
    return s, h


def mean_u(scores: Iterable[ProbeScore]) -> float:
    xs = [p.u for p in scores]
    return sum(xs) / len(xs) if xs else 0.0


def ntu(sys: Sequence[ProbeScore], none: Sequence[ProbeScore], oracle: Sequence[ProbeScore]) -> float | None:
    """Normalised utility: 0 = the empty block, 1 = the gold sentences; None if they tie."""
    lo, hi = mean_u(none), mean_u(oracle)
    if abs(hi - lo) < 1e-12:
        return None
    return (mean_u(sys) - lo) / (hi - lo)


def harmful_rate(scores: Sequence[ProbeScore]) -> float:
    return sum(p.h for p in scores) / len(scores) if scores else 0.0


def bootstrap_ci(sys: Sequence[ProbeScore], none: Sequence[ProbeScore], oracle: Sequence[ProbeScore], *,
                 seed: int, n_boot: int = 1000) -> dict[str, list[float | None]]:
    """95% percentile intervals of NTU and harmful rate, resampling whole streams.

    The three lists are aligned probe by probe; probes of one stream are kept together
    (they share a history, so they are not independent).
    """
    by_stream: dict[int, list[int]] = {}
    for i, p in enumerate(sys):
        by_stream.setdefault(p.stream, []).append(i)
    streams = sorted(by_stream)
    rng = random.Random(seed)
    ntus: list[float] = []
    rates: list[float] = []
    for _ in range(n_boot):
        idx = [i for s in (rng.choice(streams) for _ in streams) for i in by_stream[s]]
        value = ntu([sys[i] for i in idx], [none[i] for i in idx], [oracle[i] for i in idx])
        if value is not None:
            ntus.append(value)
        rates.append(harmful_rate([sys[i] for i in idx]))
    return {"ntu": _interval(ntus), "harmful_rate": _interval(rates)}


def _interval(xs: list[float]) -> list[float | None]:
    if not xs:
        return [None, None]
    xs = sorted(xs)
    lo = xs[int(0.025 * (len(xs) - 1))]
    hi = xs[int(round(0.975 * (len(xs) - 1)))]
    return [round(lo, 4), round(hi, 4)]


def summarise(blocks: Mapping[str, Mapping[int, Sequence[ProbeScore]]], *, seed: int,
              n_boot: int = 1000) -> dict[str, object]:
    """The benchmark document from scores of ``sys``, ``none`` and ``oracle`` per budget."""
    out: dict[str, object] = {"ntu": {}, "harmful_rate": {}, "by_dimension": {}, "ci95": {}}
    dims = sorted({p.dimension for p in blocks["sys"][BUDGETS[0]]})
    by_dim: dict[str, dict[str, object]] = {d: {"ntu": {}, "harmful_rate": {}, "n": 0} for d in dims}
    for b in BUDGETS:
        sys, none, oracle = blocks["sys"][b], blocks["none"][b], blocks["oracle"][b]
        key = str(b)
        out["ntu"][key] = _round(ntu(sys, none, oracle))  # type: ignore[index]
        out["harmful_rate"][key] = round(harmful_rate(sys), 4)  # type: ignore[index]
        out["ci95"][key] = bootstrap_ci(sys, none, oracle, seed=seed, n_boot=n_boot)  # type: ignore[index]
        for d in dims:
            idx = [i for i, p in enumerate(sys) if p.dimension == d]
            pick = lambda xs: [xs[i] for i in idx]  # noqa: E731
            entry = by_dim[d]
            entry["ntu"][key] = _round(ntu(pick(sys), pick(none), pick(oracle)))  # type: ignore[index]
            entry["harmful_rate"][key] = round(harmful_rate(pick(sys)), 4)  # type: ignore[index]
            entry["n"] = len(idx)
    out["by_dimension"] = by_dim
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
