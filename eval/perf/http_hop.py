"""What the HTTP hop adds to an observe acknowledgement: one run, the paths interleaved.

Run from the repository root::

    DYNMEM_EMBEDDER=hash .venv/bin/python -m eval.perf.http_hop --out /tmp/http-hop.md

``dynmem bench perf`` times the observes of each path in its own phase, minutes apart, on a
shared machine. This probe starts a real sidecar (``dynmem serve --detach``) and a local Ray
of its own in this process, and sends each turn down every path in turn (order shuffled per
turn), so that load from elsewhere hits them alike:

* ``ray``: ``Pipeline.observe`` of one turn from a driver (the actor graph without HTTP);
* ``http``: ``POST /v1/observe`` over one kept-alive connection (as the opencode plugin's
  ``fetch`` sends it), with the sidecar's own part of it from its ``Server-Timing`` header;
* ``http, new connection``: the same through ``urllib``, one TCP connection per request (how
  ``bench perf`` timed it before it kept the connection alive);
* ``health``: ``GET /v1/health`` over the kept-alive connection: HTTP and the app, no actor (a
  plain ``def`` route: it also takes a thread of the pool and back).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eval.perf.measure import emit_report, machine_facts, summarize_ms

PATHS = ("ray", "http", "http, new connection", "health")
WARMUP = 20


def _server_ms(timing: str | None) -> float:
    """The sidecar's admit + serve time of a ``Server-Timing`` header (``admit;dur=0.0, serve;dur=2.1``)."""
    return sum(float(part.split("dur=")[1]) for part in (timing or "").split(",") if "dur=" in part)


class _Client:
    """Kept-alive and one-shot requests to a sidecar, with the bearer token."""

    def __init__(self, url: str, token: str) -> None:
        import http.client
        from urllib.parse import urlsplit

        self.url = url.rstrip("/")
        parts = urlsplit(self.url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.server_ms: list[float] = []

    def kept(self, method: str, path: str, body: dict[str, Any] | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=data, headers=self.headers)
        reply = self.conn.getresponse()
        reply.read()
        if reply.status != 200:
            raise RuntimeError(f"{method} {path}: HTTP {reply.status}")
        if path == "/v1/observe":
            self.server_ms.append(_server_ms(reply.getheader("Server-Timing")))

    def one_shot(self, path: str, body: dict[str, Any]) -> None:
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers=self.headers)
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()


def _wire(t: Any) -> dict[str, Any]:
    return {"project": t.project, "session": t.session, "user": t.user, "assistant": t.assistant,
            "request_id": t.request_id}


def run(n: int, seed: int = 0) -> dict[str, Any]:
    import ray

    from actors.config import load_settings
    from actors.launch import Runtime
    from actors.pipeline import Pipeline
    from eval.perf.run import _dynmem_cmd, _observe_turns

    machine = machine_facts()  # its load average is the one at the start
    root = Path(tempfile.mkdtemp(prefix="dynmem-http-hop-"))
    side = root / "sidecar"
    env = {**os.environ, "DYNMEM_STATE_DIR": str(root / "state")}  # never announced as the user's sidecar
    started = subprocess.run([*_dynmem_cmd(), "serve", "--detach", "--data-dir", str(side), "--json"],
                             capture_output=True, text=True, timeout=180, env=env)
    if started.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"dynmem serve --detach failed: {started.stderr[-2000:]}")
    ms: dict[str, list[float]] = {p: [] for p in PATHS}
    client: _Client | None = None
    try:
        info = json.loads((side / "sidecar.json").read_text(encoding="utf-8"))
        client = _Client(str(info["url"]), Path(info["token_file"]).read_text(encoding="utf-8").strip())
        ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
        rt = Runtime(root / "ray", load_settings(None), use_ray=True)
        try:
            pipe = Pipeline(rt)
            turns = {p: _observe_turns(n + WARMUP, f"hop{i}") for i, p in enumerate(PATHS)}
            kept, one_shot = client.kept, client.one_shot
            calls: dict[str, Callable[[int], object]] = {
                "ray": lambda i: pipe.observe([turns["ray"][i]]),
                "http": lambda i: kept("POST", "/v1/observe", _wire(turns["http"][i])),
                "http, new connection": lambda i: one_shot("/v1/observe", _wire(turns["http, new connection"][i])),
                "health": lambda i: kept("GET", "/v1/health"),
            }
            rng = random.Random(seed)
            for i in range(n + WARMUP):
                order = list(PATHS)
                rng.shuffle(order)
                for p in order:
                    t0 = time.perf_counter()
                    calls[p](i)
                    if i >= WARMUP:
                        ms[p].append((time.perf_counter() - t0) * 1000.0)
        finally:
            rt.shutdown()
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([*_dynmem_cmd(), "stop", "--data-dir", str(side)], capture_output=True, timeout=120, env=env)
        shutil.rmtree(root, ignore_errors=True)
    rows = {p: summarize_ms(v) for p, v in ms.items()}
    rows["http, in the sidecar"] = summarize_ms(client.server_ms[WARMUP:] if client else [])
    return {"machine": machine, "n": n, "rows": rows, "loadavg_end": [round(x, 2) for x in os.getloadavg()]}


def render(doc: dict[str, Any], command: str) -> str:
    m = doc["machine"]
    lines = [
        "# What the HTTP hop adds to an observe acknowledgement",
        "",
        f"Reproduce: `{command}`",
        "",
        f"Machine: {m.get('nproc')} cores, {m.get('cpu')}; load average {m.get('loadavg_start')} at the start, "
        f"{doc.get('loadavg_end')} at the end. {doc['n']} calls per path after {WARMUP} untimed, the paths taken "
        "in turn (shuffled per turn) in one run: compare the rows, not runs.",
        "",
        "| path | p50 (ms) | p95 (ms) | mean (ms) |",
        "| --- | --- | --- | --- |",
    ]
    for name, r in doc["rows"].items():
        if r.get("n"):
            lines.append(f"| {name} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | {r['mean_ms']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="timed calls per path")
    p.add_argument("--out", type=Path, default=None, help="write the markdown report (and a .json beside it)")
    args = p.parse_args(argv)
    doc = run(args.n)
    text = render(doc, "python -m eval.perf.http_hop" + (f" --out {args.out}" if args.out else ""))
    emit_report(text, doc, args.out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
