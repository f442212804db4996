"""Replay of history files and the bundled demo (``dynmem replay``, ``dynmem demo``)."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from actors.pipeline import Pipeline
from actors.wire import RecallRequest
from engine.errors import InvalidInput, MalformedHistory
from examples import bundled
from engine.history import Problem, parse_history
from engine.limits import MAX_LINE_BYTES

# Package data (examples/), found by importlib.resources: also in an installed wheel.
DEMO_HISTORY = bundled("shop-api-history.jsonl")
DEMO_QUESTIONS = bundled("shop-api-questions.json")


class ReplayReport(BaseModel):
    model_config = ConfigDict(frozen=True)
    file: str
    turns: int
    new_turns: int
    already_logged: int
    problems: list[Problem]
    projects: dict[str, dict[str, int]]
    outcomes: dict[str, int]
    dead_jobs: int
    seconds: float
    retried_dead: int = 0

    def summary(self) -> str:
        lines = [f"replayed {self.turns} turns from {self.file} in {self.seconds:.1f} s "
                 f"({self.new_turns} new, {self.already_logged} already logged)"]
        for project, states in sorted(self.projects.items()):
            lines.append(f"  {project}: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())))
        if self.outcomes:
            lines.append("  candidates: " + ", ".join(f"{n} {k}" for k, n in sorted(self.outcomes.items())))
        for p in self.problems:
            lines.append(f"  skipped {p.message}")
        if self.retried_dead:
            lines.append(f"  {self.retried_dead} job(s) left dead by an earlier run were retried")
        if self.dead_jobs:
            lines.append(f"  {self.dead_jobs} job(s) dead after retries: see `dynmem jobs list`; a new replay retries them")
        return "\n".join(lines)


def read_lines(path: Path) -> Iterator[bytes]:
    """The lines of ``path`` as bytes (decoded one by one later: a bad byte costs its line only).

    A line longer than ``MAX_LINE_BYTES`` is never held whole: its first ``MAX_LINE_BYTES + 1``
    bytes are yielded (so that the parser reports it as too long) and the rest is skipped.
    """
    with path.open("rb") as fh:
        while True:
            line = fh.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while True:
                    rest = fh.readline(1 << 20)
                    if not rest or rest.endswith(b"\n"):
                        break
                yield line
                continue
            yield line.rstrip(b"\r\n")


def replay_file(pipe: Pipeline, path: Path, project: str | None = None, strict: bool = False,
                progress: bool = False, position: int = 0) -> ReplayReport:
    """Run every turn of ``path`` through the whole pipeline and wait until all work is drained."""
    clock = getattr(getattr(pipe, "rt", None), "clock", None)
    now_ms = clock.now_ms() if clock is not None else int(time.time() * 1000)
    try:
        # The whole file is checked before any of it is logged (a bad line is skipped, or fatal with --strict).
        turns, problems = parse_history(read_lines(path), default_project=project, strict=strict, now_ms=now_ms)
    except FileNotFoundError as exc:
        raise InvalidInput(f"history file not found: {path}") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read history file {path}: {exc}") from exc
    if not turns:
        raise MalformedHistory(f"{path}: no valid turn" + (f" ({len(problems)} malformed lines)" if problems else ""))
    # Turns without a timestamp keep their line order (one millisecond apart).
    base = now_ms - len(turns)
    turns = [t if t.ts_ms is not None else t.model_copy(update={"ts_ms": base + i}) for i, t in enumerate(turns)]
    t0 = time.perf_counter()
    # Jobs a previous replay left dead get fresh attempts now (they are drained below).
    retried = sum(int(pipe.rt.log(p).retry_dead("extract"))
                  for p in sorted({t.project for t in turns}) if pipe.rt.has_project(p))
    # The first turns are logged before anything else (a turn the log refuses fails the replay
    # before any distilling), the rest in the background while they are distilled: the drain
    # leases full batches only until all is logged, so the memories are those of a replay that
    # logs everything first (issue 12: logging 400 turns took a tenth of a 16-in-flight replay).
    # A sidecar's client (bridge/client.py) distils in the sidecar: everything is logged first.
    overlap = isinstance(pipe, Pipeline)
    first = _FIRST_CHUNK if overlap else len(turns)
    acks = []
    for i in range(0, first, _CHUNK):
        acks.extend(pipe.observe(turns[i:min(first, i + _CHUNK)]))
    rest = [turns[i:i + _CHUNK] for i in range(first, len(turns), _CHUNK)]
    logged = threading.Event()
    failure: list[BaseException] = []

    def log_rest() -> None:
        try:
            for chunk in rest:
                acks.extend(pipe.observe(chunk))
        except BaseException as exc:  # raised below, after the turns logged so far are distilled
            failure.append(exc)
        finally:
            logged.set()

    writer = threading.Thread(target=log_rest, name="replay-log", daemon=True)
    writer.start()
    bar = None
    if progress:
        from tqdm import tqdm  # type: ignore[import-untyped]  # tqdm ships no type hints

        bar = tqdm(total=len(turns), unit="turn", desc=f"replay {path.name}" if position else "replay",
                   position=position)
    outcomes: Counter[str] = Counter()
    dead = 0
    projects = sorted({t.project for t in turns})
    for p in projects:
        with _drain_lock(p):  # two files of one project (batch replay) are distilled one after the other
            update = bar.update if bar else None
            rep = pipe.drain(p, progress=update, logging=logged) if overlap else pipe.drain(p, progress=update)
        outcomes.update(rep.outcomes)
        dead += rep.dead
    writer.join()
    if failure:
        raise failure[0]
    new = sum(1 for a in acks if a.created)
    if bar:
        bar.total = new  # turns already logged by an earlier run are not distilled again
        bar.refresh()
        bar.close()
    states = {p: pipe.stats(p).memories_by_state for p in projects}
    return ReplayReport(file=str(path), turns=len(turns), new_turns=new, already_logged=len(acks) - new,
                        problems=problems, projects=states, outcomes=dict(outcomes), dead_jobs=dead, retried_dead=retried,
                        seconds=round(time.perf_counter() - t0, 3))


#: Turns logged before the drain starts, then per background call: a chunk of 64 is two batches
#: of extract jobs, and the log actor answers the drain's leases between chunks.
_FIRST_CHUNK = 64
_CHUNK = 64

_DRAIN_LOCKS: dict[str, threading.Lock] = {}
_DRAIN_LOCKS_GUARD = threading.Lock()


def _drain_lock(project: str) -> threading.Lock:
    with _DRAIN_LOCKS_GUARD:
        return _DRAIN_LOCKS.setdefault(project, threading.Lock())


def history_files(paths: list[Path]) -> list[Path]:
    """The history files named: a folder stands for its ``*.jsonl`` files (sorted), a file for itself."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(q for q in p.glob("*.jsonl") if q.is_file())
            if not found:
                raise InvalidInput(f"no *.jsonl history file in the folder {p}")
            files.extend(found)
        else:
            files.append(p)
    if len(set(files)) != len(files):
        raise InvalidInput("a history file is named twice")
    return files


class BatchItem(BaseModel):
    model_config = ConfigDict(frozen=True)
    file: str
    report: ReplayReport | None = None
    error: str = ""
    code: str = ""


def replay_many(pipe: Pipeline, files: list[Path], project: str | None = None, strict: bool = False,
                parallel: int = 4, progress: bool = False) -> list[BatchItem]:
    """Replay several history files at once over one runtime (its single writer): each file in its
    own thread with its own pipeline, so the projects' actors work in parallel; one progress bar
    per file. A file that fails is reported and the others go on."""
    from concurrent.futures import ThreadPoolExecutor

    from engine.errors import DynmemError

    def one(i_path: tuple[int, Path]) -> BatchItem:
        i, path = i_path
        mine = Pipeline(pipe.rt) if isinstance(pipe, Pipeline) else pipe
        try:
            rep = replay_file(mine, path, project=project, strict=strict, progress=progress, position=i + 1)
            return BatchItem(file=str(path), report=rep)
        except DynmemError as exc:
            return BatchItem(file=str(path), error=exc.message, code=exc.code)

    workers = max(1, min(parallel, len(files))) if isinstance(pipe, Pipeline) else 1
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="replay") as pool:
        return list(pool.map(one, enumerate(files)))


def batch_table(items: list[BatchItem], seconds: float) -> str:
    """The summary table of a batch replay."""
    rows = [("file", "projects", "turns", "new", "memories", "dead jobs", "seconds")]
    for it in items:
        r = it.report
        if r is None:
            rows.append((Path(it.file).name, f"error[{it.code}]: {it.error}"[:60], "-", "-", "-", "-", "-"))
            continue
        mems = sum(sum(states.values()) for states in r.projects.values())
        rows.append((Path(it.file).name, ", ".join(sorted(r.projects)), str(r.turns), str(r.new_turns), str(mems),
                     str(r.dead_jobs), f"{r.seconds:.1f}"))
    ok = [it.report for it in items if it.report is not None]
    rows.append((f"{len(items)} files", f"{len(items) - len(ok)} failed", str(sum(r.turns for r in ok)),
                 str(sum(r.new_turns for r in ok)), str(sum(sum(sum(s.values()) for s in r.projects.values()) for r in ok)),
                 str(sum(r.dead_jobs for r in ok)), f"{seconds:.1f} wall"))
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(len(lines) - 1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


class DemoAnswer(BaseModel):
    model_config = ConfigDict(frozen=True)
    question: str
    context: str
    abstained: bool
    expect: list[str]
    stale: list[str]
    found: list[str]
    stale_found: list[str]
    correct: bool


class DemoReport(BaseModel):
    model_config = ConfigDict(frozen=True)
    replay: ReplayReport
    answers: list[DemoAnswer]

    @property
    def all_correct(self) -> bool:
        return all(a.correct for a in self.answers)

    def render(self) -> str:
        out = [self.replay.summary(), ""]
        for a in self.answers:
            mark = "ok " if a.correct else "MISS"
            out.append(f"[{mark}] Q: {a.question}")
            if a.abstained and not a.context:
                out.append("       (memory abstains: nothing relevant)")
            for line in a.context.splitlines()[2:-1]:
                out.append("       " + line)
            if a.stale_found:
                out.append(f"       stale value served: {', '.join(a.stale_found)}")
            out.append("")
        ok = sum(a.correct for a in self.answers)
        out.append(f"{ok}/{len(self.answers)} questions answered with current values and no stale ones")
        return "\n".join(out)


def run_demo(pipe: Pipeline, progress: bool = False) -> DemoReport:
    """Replay the bundled shop-api history, then ask the bundled questions (passive recall)."""
    rep = replay_file(pipe, DEMO_HISTORY, progress=progress)
    answers = []
    for q in json.loads(DEMO_QUESTIONS.read_text(encoding="utf-8")):
        res = pipe.recall(RecallRequest(project="shop-api", query=q["question"], passive=True))
        low = res.context.lower()
        found = [e for e in q["expect"] if e.lower() in low]
        stale = [s for s in q["stale"] if s.lower() in low]
        correct = len(found) == len(q["expect"]) and not stale and (bool(q["expect"]) or res.abstained)
        answers.append(DemoAnswer(question=q["question"], context=res.context, abstained=res.abstained,
                                  expect=q["expect"], stale=q["stale"], found=found, stale_found=stale, correct=correct))
    return DemoReport(replay=rep, answers=answers)
