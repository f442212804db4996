"""The ``dynmem`` command: one parser, one function per subcommand, one line per error.

Each subcommand parses, loads settings, calls one function of the public API and prints:
tables for people, exactly one JSON document with ``--json``. Errors become
``error[code]: message`` on stderr and a non-zero exit status.
"""

from __future__ import annotations

from bridge.packages import exit_if_shadowed

# Before anything imports actors/ or eval/: a foreign package of that name would be used silently.
exit_if_shadowed()

from actors.config import set_process_defaults  # noqa: E402

# One BLAS thread before numpy loads (actors.config.PROCESS_DEFAULTS says why).
set_process_defaults("OPENBLAS_NUM_THREADS")

import argparse  # noqa: E402
import json
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NoReturn

from engine.errors import DynmemError, InvalidInput, NotFound, ServiceUnavailable

if TYPE_CHECKING:
    import numpy as np

    from engine.models import Memory

EXIT_ERROR = 1
EXIT_USAGE = 2


#: With ``--json``: the real standard output, which only the one JSON document is written to
#: (``_stdout_for_json_only``); None otherwise.
_JSON_OUT: list[Any] = []


def _write_doc(doc: Any) -> None:
    out = _JSON_OUT[-1] if _JSON_OUT else sys.stdout
    out.write(json.dumps(doc, ensure_ascii=False, default=str) + "\n")
    out.flush()


def _emit(args: argparse.Namespace, doc: Any, human: Callable[[], None]) -> None:
    if args.json:
        _write_doc(doc)
    else:
        human()


@contextmanager
def _session(args: argparse.Namespace, use_ray: bool) -> Iterator[Any]:
    """Settings, runtime and pipeline for one command; Ray is shut down on the way out."""
    from actors.config import data_dir, load_settings
    from actors.launch import Runtime
    from actors.pipeline import Pipeline

    settings = load_settings(Path(args.config) if args.config else None)
    if getattr(args, "workers", None) is not None:
        if args.workers < 1:
            raise InvalidInput("--workers must be at least 1")
        settings = settings.model_copy(update={"runtime": settings.runtime.model_copy(
            update={"extraction_workers": args.workers})})
    # Only commands that store something may create the data directory; a read of nothing fails.
    folder = data_dir(args.data_dir, create=getattr(args, "creates", False))
    from bridge.server import running_sidecar

    if args.func in READS and getattr(args, "scope", "project") != "global":  # a read of an unknown project fails, creating nothing
        from bridge.project import require_project

        require_project(folder, args.project)
    sidecar = running_sidecar(folder)
    if sidecar is not None:
        # The sidecar owns the stores: talk to it rather than open them a second time.
        from bridge.client import SidecarPipeline

        remote = SidecarPipeline(sidecar)
        remote.wait_drain = args.func in (cmd_replay, cmd_demo)  # these report what the whole pipeline made
        yield remote
        return
    from engine.errors import StoreLocked

    started_ray = False
    if use_ray:
        import ray

        started_ray = not ray.is_initialized()
    try:
        rt = Runtime(folder, settings, use_ray=use_ray, address=getattr(args, "address", None))
    except StoreLocked as exc:
        if started_ray:
            import ray

            ray.shutdown()
        if not _read_only(args):
            raise
        # Reads stay possible while another process writes: they read a consistent snapshot.
        with _snapshot_session(folder, settings, str(exc)) as pipe:
            yield pipe
        return
    try:
        yield Pipeline(rt)
    finally:
        rt.shutdown()
        if started_ray:
            import ray

            ray.shutdown()


def _read_only(args: argparse.Namespace) -> bool:
    """Whether the command only reads (so it may read a snapshot while another process writes)."""
    func, action = args.func, getattr(args, "action", None)
    return ((func is cmd_recall and not args.live) or (func is cmd_memories and action in ("list", "show", "why"))
            or func in (cmd_export, cmd_repairs) or (func is cmd_jobs and action == "list")
            or (func is cmd_review and action == "list"))


@contextmanager
def _snapshot_session(folder: Path, settings: Any, holder: str) -> Iterator[Any]:
    """A pipeline over a consistent copy of the stores (SQLite's online backup), in process, thrown
    away afterwards: whatever the read touches (a recall's bookkeeping) never reaches the writer's files."""
    import tempfile

    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from actors.store.backup import backup_data_dir

    print(f"note[store_locked]: {holder}; this read uses a snapshot taken now", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="dynmem-read-") as tmp:
        copy = Path(tmp) / "data"
        backup_data_dir(folder, copy)
        rt = Runtime(copy, settings, use_ray=False)
        try:
            yield Pipeline(rt)
        finally:
            rt.shutdown()


def _recall_doc(res: Any) -> dict[str, Any]:
    return {
        "retrieval_id": res.retrieval_id,
        "abstained": res.abstained,
        "context": res.context,
        "memories": [{"id": m.id, "text": m.text, "score": m.score, "state": m.state, "scope": m.scope,
                      "kind": m.kind, "tier": m.tier, "provisional": m.provisional, "always_on": m.always_on}
                     for m in res.memories],
        "conflicts": [c.model_dump() for c in res.conflicts],
    }


# ---- subcommands ----------------------------------------------------------------------
def cmd_replay(args: argparse.Namespace) -> int:
    from actors.replay import history_files, replay_file

    named = [Path(f) for f in args.file]
    if len(named) > 1 or named[0].is_dir():
        return _replay_batch(args, history_files(named))
    with _session(args, use_ray=not args.in_process) as pipe:
        report = replay_file(pipe, named[0], project=args.project, strict=args.strict,
                             progress=sys.stderr.isatty() and not args.json)
    # Each skipped line goes to stderr too, so that it is seen with --json and in scripts
    # that keep only stdout (DESIGN §11: reported with its line number, never silently dropped).
    for problem in report.problems:
        message = problem.message if problem.message.startswith(f"line {problem.line}") else \
            f"line {problem.line}: {problem.message}"
        print(f"warning[malformed_history]: {named[0]}: {message} (skipped)", file=sys.stderr)
    doc = report.model_dump()
    _emit(args, doc, lambda: print(report.summary()))
    if report.dead_jobs:  # not everything was distilled: a script must not take this run for complete
        print(f"error[dead_jobs]: {report.dead_jobs} job(s) dead after retries; see `dynmem jobs list`, "
              f"a new replay retries them", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR if report.problems and args.strict else 0


def _replay_batch(args: argparse.Namespace, files: list[Path]) -> int:
    """``dynmem replay a.jsonl b.jsonl DIR/``: every file at once over one runtime, then a summary table."""
    import time

    from actors.replay import batch_table, replay_many

    if args.parallel < 1:
        raise InvalidInput("--parallel must be at least 1")
    t0 = time.perf_counter()
    with _session(args, use_ray=not args.in_process) as pipe:
        items = replay_many(pipe, files, project=args.project, strict=args.strict, parallel=args.parallel,
                            progress=sys.stderr.isatty() and not args.json)
    seconds = time.perf_counter() - t0
    for it in items:
        for problem in it.report.problems if it.report else []:
            print(f"warning[malformed_history]: {it.file}: line {problem.line}: {problem.message} (skipped)",
                  file=sys.stderr)
    doc = {"files": [it.model_dump() for it in items], "seconds": round(seconds, 3),
           "failed": sum(1 for it in items if it.report is None),
           "dead_jobs": sum(it.report.dead_jobs for it in items if it.report)}
    _emit(args, doc, lambda: print(batch_table(items, seconds)))
    if doc["failed"] or doc["dead_jobs"]:
        print(f"error[batch_incomplete]: {doc['failed']} file(s) failed, {doc['dead_jobs']} job(s) dead; "
              f"see the table above", file=sys.stderr)
        return EXIT_ERROR
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from actors.replay import run_demo

    with _session(args, use_ray=not args.in_process) as pipe:
        demo = run_demo(pipe, progress=sys.stderr.isatty() and not args.json)
    _emit(args, demo.model_dump(), lambda: print(demo.render()))
    return 0


def cmd_observe(args: argparse.Namespace) -> int:
    from engine.models import TurnIn

    turn = TurnIn(project=args.project, session=args.session, user=args.user, assistant=args.assistant,
                  request_id=args.request_id)
    if not turn.user.strip():
        raise InvalidInput("--user must not be empty")
    with _session(args, use_ray=not args.in_process) as pipe:
        ack = pipe.observe([turn])[0]
        report = pipe.drain(args.project)
    doc = {**ack.model_dump(), "outcomes": report.outcomes}
    _emit(args, doc, lambda: print(f"observed {ack.unit_id} (turn {ack.turn}{'' if ack.created else ', already logged'}); "
                                    + ", ".join(f"{k}: {v}" for k, v in sorted(report.outcomes.items()))))
    return 0


def _parse_as_of(text: str | None) -> int | None:
    if not text:
        return None
    from engine.history import parse_ts

    try:
        return parse_ts(text)
    except InvalidInput as exc:  # parse_ts speaks of history lines (malformed_history)
        raise InvalidInput(f"--as-of: {text!r} is not an ISO 8601 time") from exc


def cmd_recall(args: argparse.Namespace) -> int:
    from actors.wire import RecallRequest
    from engine.errors import EmptyQuery

    if not args.query.strip():  # before the project check: the query is wrong whatever the project
        raise EmptyQuery("the query is empty")

    # Passive unless --live: looking something up from a terminal is not a memory miss, and
    # must not credit memories or start a repair (issue 13: a CLI recall stored its own question).
    req = RecallRequest(project=args.project, query=args.query, k=args.k, budget_tokens=args.budget_tokens,
                        passive=not args.live, as_of_ms=_parse_as_of(args.as_of), for_model=not args.owner)
    with _session(args, use_ray=args.ray) as pipe:
        res = pipe.recall(req)
    doc = _recall_doc(res)

    def human() -> None:
        if res.abstained and not res.memories:
            print("(no memory is relevant enough: abstained)")
        else:
            print(res.context)

    _emit(args, doc, human)
    return 0


def _mem_row(m: Any) -> dict[str, Any]:
    return {"id": m.id, "text": m.text, "state": m.state.value, "pool": m.pool.value, "kind": m.kind.value,
            "tier": m.tier.value, "scope": m.scope, "key": m.key, "evidence": m.evidence,
            "valid_from_ms": m.valid_from_ms, "valid_to_ms": m.valid_to_ms, "sensitivity": m.sensitivity.value}


def _scope_of(args: argparse.Namespace) -> bool:
    """Whether the command is about the global scope; a project is needed otherwise."""
    if args.scope == "global":
        return True
    if not args.project:
        raise InvalidInput("--project is required (or --scope global for the memories shared by every project)")
    return False


def cmd_memories(args: argparse.Namespace) -> int:
    is_global = _scope_of(args)
    with _session(args, use_ray=args.ray) as pipe:
        if args.action == "list":
            rows = pipe.global_memories(args.state) if is_global else pipe.memories(args.project, args.state)

            def list_rows() -> None:
                printed = False
                for m in rows:
                    print(f"{m.id}  {m.state.value:<10} {m.pool.value}  {m.text}")
                    printed = True
                if not printed:
                    print("(none)")

            _emit(args, {"memories": [_mem_row(m) for m in rows]}, list_rows)
            return 0
        if not args.id:
            raise InvalidInput(f"memories {args.action} needs a memory id")
        if args.action == "patch":
            if args.tier is None and args.sensitivity is None:
                raise InvalidInput("memories patch needs --tier or --sensitivity")
            m = (pipe.global_patch(args.id, args.tier, args.sensitivity) if is_global
                 else pipe.patch(args.project, args.id, args.tier, args.sensitivity))
            _emit(args, {"memory": _mem_row(m)}, lambda: print(f"{m.id}: tier {m.tier.value}, sensitivity {m.sensitivity.value}"))
            return 0
        if is_global and args.action == "why":
            raise InvalidInput("memories why needs a project: recall scores a global memory for a project's query")
        d = pipe.global_detail(args.id) if is_global else pipe.detail(args.project, args.id)
        why = None
        if args.action == "why":
            terms = pipe.why(args.project, args.id, args.query)
            why = terms.model_dump() if terms is not None else None
    doc: dict[str, Any] = {"memory": _mem_row(d.memory), "history": [e.model_dump(mode="json") for e in d.history],
           "versions": [_mem_row(v) for v in d.versions]}
    if args.action == "why":
        doc["why"] = why
        doc["why_query"] = args.query or d.memory.text

    def human() -> None:
        m = d.memory
        print(f"{m.id} [{m.state.value}, pool {m.pool.value}, {m.kind.value}, tier {m.tier.value}, {m.scope}]")
        print(f"  {m.text}")
        print(f"  key={m.key!r} belief={m.belief!r} evidence={m.evidence} sources={', '.join(m.source_unit_ids) or '-'}")
        if len(d.versions) > 1:
            print("versions of this key (oldest first):")
            for v in d.versions:
                print(f"  {v.id} {v.state.value:<10} valid {v.valid_from_ms}..{v.valid_to_ms or 'now'}  {v.text}")
        if args.action == "why":
            print(f"score terms for the query {doc['why_query']!r}:")
            if why is None:
                print("  (not eligible for recall: retired, expired or filtered)")
            else:
                for k, v in why.items():
                    print(f"  {k:<18} {v}")
        print("history:")
        for e in d.history:
            print(f"  {e.at_ms} {e.action:<9} by {e.actor.value:<9} {e.from_state or '-'} -> {e.to_state or '-'}  {e.reason}")

    _emit(args, doc, human)
    return 0


def cmd_remember(args: argparse.Namespace) -> int:
    from actors.wire import RememberRequest

    req = RememberRequest(project=args.project, text=args.text, scope=args.scope, tier=args.tier,
                          ttl_hours=args.ttl_hours, sensitivity=args.sensitivity)
    with _session(args, use_ray=args.ray) as pipe:
        rep = pipe.remember(req)
    doc = {"memory_ids": list(rep.memory_ids), "outcomes": rep.outcomes}
    _emit(args, doc, lambda: print(f"remembered {', '.join(rep.memory_ids)} ({', '.join(rep.outcomes)})"))
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from actors.wire import ForgetRequest

    if not args.id and not args.match:
        raise InvalidInput("forget needs a memory id or --match TEXT")
    if _scope_of(args):
        with _session(args, use_ray=args.ray) as pipe:
            res = pipe.global_forget(memory_id=args.id, match=args.match, purge=args.purge)
    else:
        req = ForgetRequest(project=args.project, memory_id=args.id, match=args.match, purge=args.purge)
        with _session(args, use_ray=args.ray) as pipe:
            res = pipe.forget(req)
    _emit(args, res.model_dump(), lambda: print(f"{'purged' if res.purged else 'retracted'}: {', '.join(res.retired)}"))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from actors.config import data_dir, load_settings
    from bridge.server import serve, serve_detached

    folder = data_dir(args.data_dir)
    settings = load_settings(Path(args.config) if args.config else None)
    if args.detach:
        argv = ["serve", "--data-dir", str(folder), "--host", args.host, "--port", str(args.port)]
        if args.config:
            argv += ["--config", str(Path(args.config).resolve())]
        if args.address:
            argv += ["--address", args.address]
        info = serve_detached(folder, argv)
        _emit(args, info, lambda: print(f"dynmem sidecar listening on {info['url']} (pid {info['pid']})"))
        return 0
    return serve(folder, settings, host=args.host, port=args.port, address=args.address,
                 ready=lambda msg: print(msg, flush=True))


def cmd_stop(args: argparse.Namespace) -> int:
    from actors.config import data_dir
    from bridge.server import stop_sidecar

    try:
        folder = data_dir(args.data_dir, create=False)
    except NotFound:
        folder = None  # no data directory: certainly no sidecar
    stopped = stop_sidecar(folder) if folder is not None else False
    _emit(args, {"stopped": stopped}, lambda: print("sidecar stopped" if stopped else "no sidecar was running"))
    return 0


def cmd_plugin(args: argparse.Namespace) -> int:
    from actors.config import data_dir
    from bridge.plugin_install import install, uninstall

    if args.action == "uninstall":
        doc = uninstall(args.project, args.global_)
        _emit(args, doc, lambda: print(f"removed the opencode plugin from {doc['removed']}" if doc["removed"]
                                       else f"the plugin was not installed at {doc['path']}"))
        return 0
    doc = install(args.project, args.global_, data_dir(args.data_dir))

    def human() -> None:
        print(f"{'installed' if doc['changed'] else 'already installed:'} the opencode plugin at {doc['installed']}")
        if doc["also_installed_globally"]:
            print("note: it is installed globally too; opencode loads it once per project (no double injection)")

    _emit(args, doc, human)
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    from engine.models import Origin

    with _session(args, use_ray=False) as pipe:
        if args.action == "list":
            rows = pipe.reviews(args.project, None if args.all else "open")
            doc = {"reviews": [{**r.review.model_dump(), "memories": [_mem_row(m) for m in r.memories]} for r in rows]}

            def human() -> None:
                if not rows:
                    print("(no open review)")
                for r in rows:
                    rv = r.review
                    print(f"{rv.id} [{rv.status}{': ' + rv.decision if rv.decision else ''}]")
                    for m in r.memories:
                        print(f"   {m.id} {m.state.value:<10} {m.text}")

            _emit(args, doc, human)
            return 0
        if not args.id or not args.decision:
            raise InvalidInput("review decide needs a review id and a decision")
        mems = pipe.decide_review(args.project, args.id, args.decision, Origin.HUMAN, args.note or "")

    def decided_rows() -> None:
        for m in mems:
            print(f"{m.id} {m.state.value:<10} {m.text}")

    _emit(args, {"review_id": args.id, "decision": args.decision, "memories": [_mem_row(m) for m in mems]},
          decided_rows)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    import base64

    with _session(args, use_ray=False) as pipe:
        rows = pipe.export(args.project)
        space, vectors = pipe.export_vectors(args.project, [m.id for m in rows]) if args.vectors else ("", {})
    out = Path(args.file)
    with out.open("w", encoding="utf-8") as fh:
        for m in rows:
            v = vectors.get(m.id)
            if v is None:  # a memory line as such (what older exports hold)
                fh.write(m.model_dump_json() + "\n")
                continue
            vec = {"embedder": space, "dim": int(v.size), "f32": base64.b64encode(v.astype("<f4").tobytes()).decode()}
            fh.write(json.dumps({"memory": m.model_dump(mode="json"), "vector": vec}) + "\n")
    _emit(args, {"file": str(out), "memories": len(rows), "vectors": len(vectors), "embedder": space},
          lambda: print(f"exported {len(rows)} memories ({len(vectors)} with their vectors) to {out}"))
    return 0


def _import_line(line: str) -> tuple[Memory, tuple[str, np.ndarray] | None]:
    """One export line: a memory, or ``{"memory": ..., "vector": {"embedder", "dim", "f32"}}``."""
    import base64
    import binascii

    import numpy as np

    from engine.models import Memory

    doc = json.loads(line)
    if not isinstance(doc, dict) or "memory" not in doc:
        return Memory.model_validate(doc), None
    vec = doc.get("vector")
    m = Memory.model_validate(doc["memory"])
    if vec is None:
        return m, None
    try:
        arr = np.frombuffer(base64.b64decode(vec["f32"], validate=True), dtype="<f4").astype(np.float32)
        space, dim = str(vec["embedder"]), int(vec["dim"])
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise ValueError(f"its vector is not embedder/dim/f32 ({exc})") from exc
    if arr.size != dim:
        raise ValueError(f"its vector has {arr.size} values, not the {dim} it declares")
    return m, (space, arr)


def cmd_import(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    rows = []
    vectors: dict[str, np.ndarray] = {}  # noqa: F821 - numpy is imported for type checking only
    spaces: set[str] = set()
    try:
        lines = Path(args.file).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidInput(f"cannot read {args.file}: {exc.strerror}") from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            m, vec = _import_line(line)
        except ValidationError as exc:
            raise InvalidInput(f"{args.file} line {n}: not a memory ({exc.errors()[0]['msg']})") from exc
        except ValueError as exc:
            raise InvalidInput(f"{args.file} line {n}: not a memory ({exc})") from exc
        rows.append(m)
        if vec is not None:
            spaces.add(vec[0])
            vectors[m.id] = vec[1]
    if len(spaces) > 1:
        raise InvalidInput(f"{args.file} mixes vectors of {len(spaces)} embedders ({', '.join(sorted(spaces))})")
    from engine.scopes import project_scope

    scope = project_scope(args.project)
    rows = [m if m.scope == "global" else m.model_copy(update={"scope": scope}) for m in rows]
    space = next(iter(spaces), "")
    with _session(args, use_ray=False) as pipe:
        reused = len(vectors) if vectors and space == pipe.embedder_id() else 0
        n = pipe.import_memories(args.project, rows, vectors=vectors, embedder=space)
    note = f" ({reused} with their exported vectors, the rest embedded)" if reused else (
        f" (embedded again: the export's vectors are from {space})" if vectors else "")
    _emit(args, {"imported": n, "reused_vectors": reused}, lambda: print(f"imported {n} memories into {args.project}{note}"))
    return 0


def cmd_backup(args: argparse.Namespace) -> int:
    from actors.config import data_dir
    from actors.store.backup import backup_data_dir

    files = backup_data_dir(data_dir(args.data_dir, create=False), Path(args.dir))
    _emit(args, {"files": [str(f) for f in files]}, lambda: print(f"backed up {len(files)} files to {args.dir}"))
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    if args.action == "retry" and args.id is None:
        raise InvalidInput("jobs retry needs a job id")
    with _session(args, use_ray=False) as pipe:
        if args.action == "retry":
            pipe.retry_job(args.project, args.id)
        counts, jobs = pipe.job_list(args.project, args.state, 200)
    doc = {"counts": counts, "jobs": [j.model_dump(mode="json") for j in jobs]}

    def job_rows() -> None:
        printed = False
        for j in jobs:
            print(f"{j.id:>6} {j.kind:<10} {j.state.value:<8} tries {j.attempts} {j.last_error[:80]}")
            printed = True
        if not printed:
            print("(no jobs)")

    _emit(args, doc, job_rows)
    return 0


def cmd_repairs(args: argparse.Namespace) -> int:
    with _session(args, use_ray=False) as pipe:
        rows = pipe.repairs(args.project, args.limit)

    def human() -> None:
        if not rows:
            print("(no repair investigation yet)")
        for r in rows:
            sig = r.signal
            kind, query, bound = (sig.kind, sig.query, sig.bound_turn) if sig else (None, "", None)
            print(f"{r.job}  [{kind}] {query[:90]!r} (reads before turn {bound})")
            units = sorted({u for call in r.read for u in call.unit_ids})
            print(f"   read {len(units)} units in {r.calls_used} calls, {r.chars_revealed} chars: {', '.join(units) or '-'}")
            for p in r.proposals:
                print(f"   {'accepted' if p.accepted else 'rejected'}: {p.text[:100]!r} ({p.reason})")

    # exclude_unset: each investigation as it was recorded, the same document as GET /v1/repairs
    _emit(args, {"repairs": [r.model_dump(mode="json", exclude_unset=True) for r in rows]}, human)
    return 0


def cmd_projects(args: argparse.Namespace) -> int:
    from actors.config import data_dir
    from bridge.project import default_project, known_projects

    folder = data_dir(args.data_dir)
    rows = known_projects(folder)
    here = default_project()
    doc = {"data_dir": str(folder), "current": here,
           "projects": [{**r, "current": r["project"] == here} for r in rows]}

    def human() -> None:
        if not rows:
            print(f"(no project in {folder})")
        for r in rows:
            print(f"{'*' if r['project'] == here else ' '} {r['project']}")

    _emit(args, doc, human)
    return 0


# Reads: an unknown project is an error (exit 1), and nothing is created for it.
READS = {cmd_recall, cmd_memories, cmd_forget, cmd_review, cmd_export, cmd_jobs, cmd_repairs}


def cmd_mcp(args: argparse.Namespace) -> int:
    from bridge.mcp_server import build_server
    from bridge.project import default_project

    project = args.project or default_project()
    with _session(args, use_ray=False) as pipe:
        # stdout carries the protocol only; the server returns when the client closes stdin.
        build_server(pipe, project).run(transport="stdio")
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    import shtab

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0


# ---- parser ---------------------------------------------------------------------------
PROJECT_HELP = "project name (default: $DYNMEM_PROJECT, else the git repository of the current directory)"
class UsageError(Exception):
    """A command line that does not parse, raised instead of exiting when ``--json`` asks for JSON."""


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one JSON document when the command line has ``--json``."""

    wants_json = False

    def error(self, message: str) -> NoReturn:
        if Parser.wants_json:
            raise UsageError(f"{self.prog}: {message}")
        super().error(message)


class HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default in ``--help`` (choices already show in the metavar)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        shown = not (default is None or default is False or default == argparse.SUPPRESS)
        if action.option_strings and shown and "default" not in text:
            text += " (default: %(default)s)"
        return text


def _show_defaults(parser: argparse.ArgumentParser) -> None:
    """The help formatter (and JSON usage errors) for every subcommand, at any depth."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child.formatter_class = HelpFormatter
                _show_defaults(child)


def build_parser() -> argparse.ArgumentParser:
    common = Parser(add_help=False)
    common.add_argument("--data-dir", help="where the stores live (default $DYNMEM_HOME or $XDG_DATA_HOME/dynmem)")
    common.add_argument("--config", help="a TOML file overriding configs/default.toml")
    common.add_argument("--json", action="store_true", help="print exactly one JSON document (errors too)")
    common.add_argument("--debug", action="store_true", help="on an error, print the full traceback")
    ray_opts = Parser(add_help=False)
    ray_opts.add_argument("--address", help="join this Ray cluster (default: $RAY_ADDRESS, else a local Ray)")
    ray_opts.add_argument("--in-process", action="store_true", help="run the graph in this process, without Ray")
    light = Parser(add_help=False)
    light.add_argument("--ray", action="store_true", help="run through Ray actors instead of in this process")
    light.add_argument("--address", help="Ray cluster address (with --ray)")

    from bridge.version import __version__

    p = Parser(prog="dynmem", description="dynamics-memory: long-term project memory for coding agents",
               formatter_class=HelpFormatter)
    p.add_argument("--version", action="version", version=f"dynmem {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser("replay", parents=[common, ray_opts], help="run a JSONL history through the whole pipeline")
    s.add_argument("file", nargs="+", help="history files, JSON Lines (one turn per line), or folders of *.jsonl; "
                                         "several are replayed in parallel, with a summary table")
    s.add_argument("--project", help="project for lines that name none")
    s.add_argument("--workers", type=int, help="extraction workers (default from settings)")
    s.add_argument("--parallel", type=int, default=4, help="history files replayed at once (several files)")
    s.add_argument("--strict", action="store_true", help="stop at the first malformed line")
    s.set_defaults(func=cmd_replay, creates=True)

    s = sub.add_parser("demo", parents=[common, ray_opts], help="replay the bundled example history and show what memory answers")
    s.set_defaults(func=cmd_demo, creates=True)

    s = sub.add_parser("observe", parents=[common, ray_opts], help="log one turn and distil it")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--user", required=True, help="the user's message")
    s.add_argument("--assistant", default="", help="the agent's reply")
    s.add_argument("--session", default="cli", help="session id")
    s.add_argument("--request-id", help="idempotency key")
    s.set_defaults(func=cmd_observe, creates=True)

    s = sub.add_parser("recall", parents=[common, light], help="show what memory would inject for a query")
    s.add_argument("query", help="the question or prompt")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--k", type=int, help="at most this many memories")
    s.add_argument("--budget-tokens", type=int, help="token budget of the block")
    s.add_argument("--passive", action="store_true", help="change nothing (the default; kept for scripts)")
    s.add_argument("--live", action="store_true",
                   help="recall as the agent does: credit the memories, record a miss when nothing is found")
    s.add_argument("--as-of", help="answer as of this ISO 8601 time (bitemporal)")
    s.add_argument("--owner", action="store_true", help="include local-only memories (owner's view, never sent to a model)")
    s.set_defaults(func=cmd_recall)

    s = sub.add_parser("memories", parents=[common, light], help="list, show or explain memories")
    s.add_argument("action", choices=["list", "show", "why", "patch"], help="what to do")
    s.add_argument("id", nargs="?", help="memory id (show, why, patch)")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--scope", choices=["project", "global"], default="project",
                   help="global: the memories shared by every project (default: the project's)")
    s.add_argument("--state", help="only this trust state (list)")
    s.add_argument("--tier", choices=["core", "normal", "temporary", "pinned"], help="new tier (patch)")
    s.add_argument("--sensitivity", choices=["normal", "local-only"], help="new sensitivity (patch)")
    s.add_argument("--query", help="query for the score breakdown (why; default: the memory's own text)")
    s.set_defaults(func=cmd_memories)

    s = sub.add_parser("remember", parents=[common, light], help="store a memory directly")
    s.add_argument("text", help="a self-contained sentence")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--scope", choices=["project", "global"], default="project", help="project (default) or global")
    s.add_argument("--tier", choices=["core", "normal", "temporary", "pinned"], default="normal", help="core is always on")
    s.add_argument("--ttl-hours", type=float, help="expire after this many hours")
    s.add_argument("--sensitivity", choices=["normal", "local-only"], default="normal", help="local-only never reaches a model")
    s.set_defaults(func=cmd_remember, creates=True)

    s = sub.add_parser("forget", parents=[common, light], help="retract a memory (or purge it with its source turns)")
    s.add_argument("id", nargs="?", help="memory id")
    s.add_argument("--match", help="retract every servable memory containing this text")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--scope", choices=["project", "global"], default="project",
                   help="global: forget a memory shared by every project")
    s.add_argument("--purge", action="store_true", help="also erase the text and its source turns")
    s.set_defaults(func=cmd_forget)

    s = sub.add_parser("review", parents=[common], help="list or settle conflicts filed for a person")
    s.add_argument("action", choices=["list", "decide"], help="what to do")
    s.add_argument("id", nargs="?", help="review id (decide)")
    s.add_argument("decision", nargs="?", choices=["accept_new", "keep_old", "keep_both", "retract_both"], help="the decision (decide)")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--note", help="why; for keep_both, the scope or condition that separates them")
    s.add_argument("--all", action="store_true", help="list decided reviews too")
    s.set_defaults(func=cmd_review)

    s = sub.add_parser("export", parents=[common], help="write every memory of a project as JSON Lines")
    s.add_argument("file", help="output file")
    s.add_argument("--no-vectors", dest="vectors", action="store_false",
                   help="leave out the memories' vectors (an import then embeds every memory again)")
    s.add_argument("--project", help=PROJECT_HELP)
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("import", parents=[common], help="restore memories from an export")
    s.add_argument("file", help="JSON Lines file written by export")
    s.add_argument("--project", help=PROJECT_HELP)
    s.set_defaults(func=cmd_import, creates=True)

    s = sub.add_parser("backup", parents=[common], help="copy a consistent snapshot of every store")
    s.add_argument("dir", help="an empty or new folder")
    s.set_defaults(func=cmd_backup)

    s = sub.add_parser("jobs", parents=[common], help="list background jobs or retry a dead one")
    s.add_argument("action", choices=["list", "retry"], help="what to do")
    s.add_argument("id", nargs="?", type=int, help="job id (retry)")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--state", choices=["pending", "running", "done", "dead"], help="only this state")
    s.set_defaults(func=cmd_jobs)

    s = sub.add_parser("repairs", parents=[common], help="show repair investigations: what was read, proposed, accepted")
    s.add_argument("action", choices=["list"], help="what to do")
    s.add_argument("--project", help=PROJECT_HELP)
    s.add_argument("--limit", type=int, default=50, help="at most this many, newest first")
    s.set_defaults(func=cmd_repairs)

    from bridge.doctor import add_doctor_parser
    from eval.cli import add_bench_parser

    add_doctor_parser(sub, common)

    add_bench_parser(sub, common)

    s = sub.add_parser("serve", parents=[common], help="run the HTTP sidecar (FastAPI in a Ray actor)")
    s.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=0, help="port (default: a free one, written to sidecar.json)")
    s.add_argument("--address", help="join this Ray cluster (default: $RAY_ADDRESS, else a local Ray)")
    s.add_argument("--detach", action="store_true", help="run in the background; return once it answers")
    s.set_defaults(func=cmd_serve)

    s = sub.add_parser("mcp", parents=[common], help="serve the memory tools over MCP on stdio (for any MCP client)")
    s.add_argument("--project", help="project of calls that name none (default: the current directory)")
    s.set_defaults(func=cmd_mcp, creates=True)

    s = sub.add_parser("stop", parents=[common], help="stop the sidecar of this data directory")
    s.set_defaults(func=cmd_stop)

    s = sub.add_parser("plugin", parents=[common], help="install or uninstall the opencode plugin")
    s.add_argument("action", choices=["install", "uninstall"], help="what to do")
    s.add_argument("--project", help="the repository holding DIR: install into its .opencode/plugin/")
    s.add_argument("--global", dest="global_", action="store_true", help="install into $XDG_CONFIG_HOME/opencode/plugin/")
    s.set_defaults(func=cmd_plugin)

    s = sub.add_parser("projects", parents=[common], help="list the projects of the data directory")
    s.set_defaults(func=cmd_projects)

    s = sub.add_parser("completion", help="print a shell completion script (bash, zsh or tcsh)",
                       description="Print a completion script; for bash: "
                                   "`dynmem completion bash > ~/.local/share/bash-completion/completions/dynmem`")
    s.add_argument("shell", choices=["bash", "zsh", "tcsh"], help="the shell")
    s.set_defaults(func=cmd_completion, json=False, debug=False)

    _show_defaults(p)
    return p


@contextmanager
def _stdout_for_json_only(enabled: bool) -> Iterator[None]:
    """With ``--json``, both the process's file descriptor 1 and ``sys.stdout`` point at stderr
    while the command runs, so that whatever Ray, its workers or a library print (Ray's error
    listener writes "A worker died ..." through ``sys.stdout``) cannot come before or after the
    one JSON document, which ``_write_doc`` writes to a private copy of the real standard output."""
    if not enabled:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    real = sys.stdout
    own = _fileno(real) == 1  # else a stream that is not fd 1 (a test's capture): the document goes there
    out = os.fdopen(os.dup(saved), "w", encoding=getattr(real, "encoding", None) or "utf-8") if own else real
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _JSON_OUT.append(out)
    try:
        yield
    finally:
        _JSON_OUT.pop()
        out.flush()
        if own:
            out.close()
        sys.stdout = real
        os.dup2(saved, 1)
        os.close(saved)


def _fileno(stream: Any) -> int:
    try:
        return int(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return -1


def _fail(args: argparse.Namespace | None, code: str, message: str, status: int = EXIT_ERROR) -> int:
    """One error: a JSON document on stdout with ``--json``, else ``error[code]: message`` on stderr."""
    if args is not None and getattr(args, "json", False):
        _write_doc({"error": message, "code": code})
    else:
        print(f"error[{code}]: {message}", file=sys.stderr)
    if args is not None and getattr(args, "debug", False):
        import traceback

        traceback.print_exc(file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    Parser.wants_json = "--json" in argv
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _fail(argparse.Namespace(json=True), "usage", str(exc), EXIT_USAGE)
    with _stdout_for_json_only(bool(getattr(args, "json", False))):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        if getattr(args, "project", "-") is None and args.func not in (cmd_replay, cmd_plugin) \
                and getattr(args, "scope", "project") != "global":
            from bridge.project import default_project

            args.project = default_project()
        return int(args.func(args))
    except DynmemError as exc:
        return _fail(args, exc.code, exc.message)
    except KeyboardInterrupt:
        return _fail(args, "interrupted", "stopped by the user", 130)
    except Exception as exc:  # the last line of defence: one line, no traceback (unless --debug)
        from pydantic import ValidationError

        if isinstance(exc, ValidationError):
            err = exc.errors()[0]
            return _fail(args, "invalid_input", f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}")
        return _fail(args, "internal", f"{type(exc).__name__}: {exc} (run again with --debug for the traceback)")


if __name__ == "__main__":
    raise SystemExit(main())
