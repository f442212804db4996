"""End to end: the real opencode CLI, the dynmem plugin, a real ``dynmem serve`` sidecar and a
scripted OpenAI-compatible model (tests/fakes/openai_server.py).

Scenario (one git repository, one sidecar, one data dir; the plugin is installed with
``dynmem plugin install`` into the repository AND globally, and opencode's environment has
neither ``dynmem`` on PATH nor ``DYNMEM_BIN`` nor the sidecar's ``DYNMEM_HOME``):
1. session 1 states three facts (API port 9090, pnpm not npm, default branch main);
2. session 2's first model request carries the facts in its system prompt, once (two installs,
   one injection); the model calls ``memory_search`` and the next request carries the memory in
   the tool result. Tool overhead is measured from that request body: the plugin's tool
   definitions <= 150 tokens, block + tools <= 250 tokens with three memories injected; the
   same request with ``DYNMEM_TOOLS=all`` gives the figure before issue 13;
3. a question given as one argument (``opencode run "Does the API run on port 3000?"``, which
   opencode delivers in literal quotes) stores nothing;
4. session 3 moves the API to port 7070; session 4, run from a subfolder of the repository,
   gets 7070 and not 9090 (same project);
5. an opencode killed with SIGKILL right after ``session.idle`` (its send held by a sidecar that
   never answers) loses nothing: the next run replays the turn from the outbox;
6. with the sidecar stopped and its start impossible, a run is not slowed by the start timeout
   and prints one "memory is off" notice.
At the end the sidecar is stopped and no process of this test is left (Ray included).
The whole scenario runs with the sidecar on the offline rules client; with the openai client (a
second fake server answering dynmem's prompts) it runs the memory path, sessions 1 to 4 and the
quoted question: the tool overhead and sessions 5 to 7 are the plugin's own behaviour, which does
not depend on the sidecar's model client.

opencode-ai is installed once with npm into ``.cache/opencode-npm/`` (reused afterwards).
Facts about driving opencode: ../shared/OPENCODE.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fakes import brain
from fakes.openai_server import FakeOpenAI

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
OPENCODE_VERSION = "1.18.33"
NPM_DIR = ROOT / ".cache" / "opencode-npm"
VENV_BIN = Path(sys.executable).parent
DYNMEM = VENV_BIN / "dynmem"  # the test's own CLI calls; opencode finds it through the install
TOKENS_PER_BYTE = 0.25  # request-body size in tokens: ~4 bytes per token (JSON and English)
RUN_TIMEOUT_S = 180  # a warm round trip is 3-5 s; the first run of a project is slower
FACT_TIMEOUT_S = 90  # the sidecar distils a turn in the background

SCRIPT: list[dict[str, Any]] = [
    # session 2: look the port up in memory, then answer from the tool result
    {"user_contains": "which port", "tool_offered": "memory_search", "tool_result": False,
     "tool_call": {"name": "memory_search", "arguments": {"query": "API port"}}},
    {"tool_result": True, "text": "Memory says so."},
    {"user_contains": "port", "text": "Understood."},
]


# ---- opencode installation and hermetic environment --------------------------------------
def opencode_bin() -> Path:
    """The opencode binary from the npm cache folder, installing it on first use (locked)."""
    binary = NPM_DIR / "node_modules" / ".bin" / "opencode"
    plugin_pkg = NPM_DIR / "node_modules" / "@opencode-ai" / "plugin" / "package.json"
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to install opencode-ai for the e2e test")
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    with open(NPM_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (binary.exists() and _installed_version(plugin_pkg) == OPENCODE_VERSION
                and _opencode_version(binary) == OPENCODE_VERSION):
            if not (NPM_DIR / "package.json").exists():
                (NPM_DIR / "package.json").write_text('{"name": "opencode-npm-cache", "private": true}\n')
            subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                 f"opencode-ai@{OPENCODE_VERSION}", f"@opencode-ai/plugin@{OPENCODE_VERSION}"],
                cwd=NPM_DIR, check=True, timeout=600)
    assert _opencode_version(binary) == OPENCODE_VERSION
    return binary


def _installed_version(package_json: Path) -> str:
    try:
        return str(json.loads(package_json.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return ""


def _opencode_version(binary: Path) -> str:
    if not binary.exists():
        return ""
    with contextlib.suppress(subprocess.SubprocessError, OSError):
        env = {**os.environ, "OPENCODE_DISABLE_AUTOUPDATE": "1"}
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
            env[var] = str(NPM_DIR / ".xdg" / var.lower())
        out = subprocess.run([str(binary), "--version"], env=env, capture_output=True, text=True, timeout=60)
        return out.stdout.strip()
    return ""


def opencode_config(base_url: str) -> dict[str, Any]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False, "share": "disabled",
        "model": "fake/fake-model", "small_model": "fake/fake-model",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake",
            "options": {"baseURL": base_url, "apiKey": "dummy"},
            "models": {"fake-model": {"name": "Fake", "tool_call": True,
                                      "limit": {"context": 32000, "output": 4000}}}}},
    }


def hermetic_env(root: Path, base_url: str, data_dir: Path) -> dict[str, str]:
    """Environment for opencode and the sidecar: private XDG dirs, no network features."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "DYNMEM", "XDG_"))}
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[var] = str(root / "xdg" / var.removeprefix("XDG_").removesuffix("_HOME").lower())
        Path(env[var]).mkdir(parents=True, exist_ok=True)
    env.update({
        "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_CONFIG_CONTENT": json.dumps(opencode_config(base_url)),
        "DYNMEM_HOME": str(data_dir),
        "DYNMEM_STATE_DIR": str(root / "state"),  # where the running sidecar announces itself
        "DYNMEM_MODEL_CLIENT": "rules",
        # no dynmem on PATH: the plugin uses the executable recorded by `dynmem plugin install`
        "PATH": os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != VENV_BIN),
        "RAY_USAGE_STATS_ENABLED": "0",
        "NO_COLOR": "1",
    })
    return env


def make_project(root: Path, env: dict[str, str]) -> Path:
    """A git repository with the plugin installed twice (in the repository and globally)."""
    project = root / "project"
    (project / "src" / "api").mkdir(parents=True)
    (project / "README.md").write_text("# shop-api\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    for where in (["--project", str(project / "src")], ["--global"]):  # from a subfolder: the repository
        subprocess.run([str(DYNMEM), "plugin", "install", *where], env=env, check=True, capture_output=True, timeout=60)
    installed = (project / ".opencode" / "plugin" / "dynmem.js").read_text()
    assert installed == (Path(env["XDG_CONFIG_HOME"]) / "opencode" / "plugin" / "dynmem.js").read_text()
    assert f'"bin": "{DYNMEM}"' in installed and "// dynmem:installed" in installed
    # the global config folder gets what the project folder got from `plugin install`
    assert (project / ".opencode" / "package-lock.json").exists()
    return project


def opencode_cmd(project: Path, message: str, title: str = "t", one_arg: bool = False) -> list[str]:
    """``one_arg``: the message as one shell argument (opencode then delivers it in literal quotes)."""
    return [str(opencode_bin()), "run", "--title", title, *([message] if one_arg else message.split())]


def project_env(project: Path, env: dict[str, str]) -> dict[str, str]:
    """opencode takes its directory from $PWD, not from the process's working directory."""
    return {**env, "PWD": str(project)}


def run_opencode(project: Path, env: dict[str, str], message: str, title: str = "t",
                 one_arg: bool = False) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(opencode_cmd(project, message, title, one_arg), cwd=project, env=project_env(project, env),
                          capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"opencode failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


PLUGIN_TOOLS = {"memory_search", "memory_forget", "memory_why", "memory_remember", "log_search", "log_timeline",
                "log_window"}


def plugin_overhead(body: dict[str, Any]) -> dict[str, int]:
    """Bytes the plugin added to one chat request: its tool definitions and its memory block."""
    tools = [t for t in body.get("tools", []) if t["function"]["name"] in PLUGIN_TOOLS]
    blocks = [m["content"] for m in body["messages"] if m["role"] == "system" and "<dynmem-memory>" in str(m["content"])]
    tool_bytes = len(json.dumps(tools, separators=(",", ":")).encode()) if tools else 0
    block_bytes = sum(len(str(b).encode()) for b in blocks)
    return {"tools": len(tools), "tool_bytes": tool_bytes, "block_bytes": block_bytes,
            "tool_tokens": round(tool_bytes * TOKENS_PER_BYTE), "block_tokens": round(block_bytes * TOKENS_PER_BYTE),
            "total_tokens": round((tool_bytes + block_bytes) * TOKENS_PER_BYTE)}


def requests_since(fake: FakeOpenAI, start: int) -> list[dict[str, Any]]:
    """Chat-completion bodies recorded after index ``start``, without title requests."""
    bodies = [r["body"] for r in fake.requests[start:] if r["path"].endswith("/chat/completions")]
    return [b for b in bodies if not FakeOpenAI.system_of(b).startswith("You are a title generator")]


# ---- the sidecar --------------------------------------------------------------------------
class SidecarClient:
    """Reads ``<data-dir>/sidecar.json`` and speaks the /v1 contract."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        info = json.loads((data_dir / "sidecar.json").read_text())
        self.info = info
        self.url = str(info["url"]).rstrip("/")
        self.pid = int(info["pid"])
        token_file = Path(info["token_file"])
        self.token = (token_file if token_file.is_absolute() else data_dir / token_file).read_text().strip()

    def call(self, method: str, route: str, body: dict[str, Any] | None = None, timeout_s: float = 30) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.url}{route}", data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return json.load(resp)

    def recall(self, project: Path, query: str) -> dict[str, Any]:
        return dict(self.call("POST", "/v1/recall", {"project": str(project), "query": query}))

    def wait_for(self, what: str, probe: Callable[[], bool], timeout_s: float = FACT_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(urllib.error.URLError, OSError, ValueError):
                if probe():
                    return
            time.sleep(0.5)
        pytest.fail(f"timed out after {timeout_s:g}s waiting for {what}")


def start_sidecar(env: dict[str, str]) -> SidecarClient:
    subprocess.run([str(DYNMEM), "serve", "--detach"], env=env, check=True, timeout=180,
                   stdin=subprocess.DEVNULL, capture_output=True)
    client = SidecarClient(Path(env["DYNMEM_HOME"]))
    with urllib.request.urlopen(f"{client.url}/v1/health", timeout=10) as resp:
        assert json.load(resp)["ok"] is True
    return client


def stop_sidecar(env: dict[str, str], pid: int) -> None:
    subprocess.run([str(DYNMEM), "stop"], env=env, timeout=120, capture_output=True)
    with contextlib.suppress(ProcessLookupError):
        if _alive(pid):
            os.kill(pid, signal.SIGTERM)


def _alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except (OSError, IndexError):
        return False


def processes_with_env(marker: str) -> list[tuple[int, str]]:
    """Live processes whose environment holds ``marker`` (Ray's raylet, GCS and workers
    inherit the sidecar's DYNMEM_HOME, so this finds every orphan of the test)."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                stat = (entry / "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] == "Z":
                    continue  # a zombie holds no resources
                found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]))
    return found


# ---- a sidecar that answers /v1/health and never anything else ---------------------------
class _Blackhole(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.startswith("/v1/health"):
            body = b'{"ok": true, "version": "blackhole"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.server.stopping.wait()  # type: ignore[attr-defined]

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self.server.stopping.wait()  # type: ignore[attr-defined]

    do_DELETE = do_POST  # noqa: N815 - stdlib name


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the killed opencode resets its connections: expected


@contextlib.contextmanager
def blackhole_sidecar(data_dir: Path) -> Iterator[None]:
    """Point a sidecar.json (here: the user's announcement) at a server whose sends hang, then restore it."""
    server = _QuietServer(("127.0.0.1", 0), _Blackhole)
    server.stopping = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    info_file = data_dir / "sidecar.json"
    original = info_file.read_text()
    info = json.loads(original)
    info["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    info_file.write_text(json.dumps(info))
    try:
        yield
    finally:
        info_file.write_text(original)
        server.stopping.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


def pending_outbox(data_dir: Path) -> list[dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    acks: set[str] = set()
    for f in (data_dir / "outbox").glob("*.jsonl"):
        for line in f.read_text().splitlines():
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if obj.get("ack"):
                    acks.add(obj["ack"])
                elif obj.get("id"):
                    entries[obj["id"]] = obj
    return [e for i, e in entries.items() if i not in acks]


# ---- the test -------------------------------------------------------------------------------
@pytest.fixture(params=["rules", "openai"])
def stack(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FakeOpenAI, dict[str, str], Path, SidecarClient]]:
    """The sidecar's own model client: the offline rules client, or the openai client on a second
    fake server whose "model" answers dynmem's prompts (tests/fakes/brain.py)."""
    opencode_bin()
    data_dir = tmp_path / "dynmem"
    with FakeOpenAI(SCRIPT, record_path=tmp_path / "model-requests.jsonl") as fake, \
            FakeOpenAI(responder=brain.answer) as memory_model:
        env = hermetic_env(tmp_path, fake.base_url, data_dir)
        if request.param == "openai":
            env.update({"DYNMEM_MODEL_CLIENT": "openai", "DYNMEM_OPENAI_BASE_URL": memory_model.base_url,
                        "DYNMEM_OPENAI_MODEL": "fake-model", "DYNMEM_OPENAI_API_KEY": "test-key"})
        project = make_project(tmp_path, env)
        sidecar = start_sidecar(env)
        try:
            yield fake, env, project, sidecar
        finally:
            stop_sidecar(env, sidecar.pid)
            marker = f"DYNMEM_HOME={data_dir}"
            deadline = time.monotonic() + 60
            while processes_with_env(marker) and time.monotonic() < deadline:
                time.sleep(0.5)
            left = processes_with_env(marker)
            for pid, _ in left:  # do not leak them into the next test, then fail
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            assert not left, f"processes left behind: {left}"
        if request.param == "openai":  # the memory really came from the sidecar's model endpoint
            assert any(brain.task_of(b) == "extract" for b in memory_model.chat_requests())


def memories_of(sidecar: SidecarClient, project: Path) -> list[dict[str, Any]]:
    from urllib.parse import quote

    return list(sidecar.call("GET", f"/v1/memories?project={quote(str(project))}")["memories"])


def jobs_idle(sidecar: SidecarClient, project: Path) -> bool:
    from urllib.parse import quote

    counts = sidecar.call("GET", f"/v1/jobs?project={quote(str(project))}")["jobs"]
    return sum(c.get("pending", 0) + c.get("running", 0) for c in counts.values()) == 0


def test_memory_flows_through_real_opencode(stack: tuple[FakeOpenAI, dict[str, str], Path, SidecarClient],
                                            tmp_path: Path) -> None:
    fake, env, project, sidecar = stack
    data_dir = Path(env["DYNMEM_HOME"])
    # opencode runs with another DYNMEM_HOME: the plugin finds the user's running sidecar anyway
    oc_env = {**env, "DYNMEM_HOME": str(tmp_path / "other-home")}
    question = "which port does the API listen on, which package manager do we use, and which branch is the default?"

    # session 1: state the facts
    first = run_opencode(project, oc_env, "the API listens on port 9090. From now on we use pnpm, not npm. "
                                          "The default branch is main.")
    assert first.stderr.count("dynmem: memory on") == 1 and f"data dir {data_dir}" in first.stderr, first.stderr
    assert not (tmp_path / "other-home" / "sidecar.json").exists()  # no second sidecar
    sidecar.wait_for("the three facts in memory", lambda: all(
        x in sidecar.recall(project, question)["context"] for x in ("9090", "pnpm", "main")))

    # session 2: injected once (two installs), then found again through the memory_search tool
    start = len(fake.requests)
    run_opencode(project, oc_env, question)
    reqs = requests_since(fake, start)
    assert len(reqs) >= 2, reqs
    first_system = FakeOpenAI.system_of(reqs[0])
    assert "9090" in first_system and "pnpm" in first_system
    assert first_system.count("<dynmem-memory>") == 1, first_system  # project + global install: one block
    assert "memory_search" in {t["function"]["name"] for t in reqs[0].get("tools", [])}
    assert not FakeOpenAI.tool_results_of(reqs[0])
    tool_results = FakeOpenAI.tool_results_of(reqs[1])
    assert tool_results and "9090" in tool_results[-1], tool_results

    # tool overhead, from the request body the model received
    after = plugin_overhead(reqs[0])
    block = next(m["content"] for m in reqs[0]["messages"] if "<dynmem-memory>" in str(m["content"]))
    assert sum(x in str(block) for x in ("9090", "pnpm", "main")) == 3, block  # three memories injected
    assert after["tools"] == 2 and after["tool_tokens"] <= 150, after
    assert after["total_tokens"] <= 250, after
    # The tool overhead and sessions 5-7 are the plugin's own behaviour, the same whichever model client
    # the sidecar has: the openai variant checks the memory path (sessions 1-4 and the quoted question).
    plugin_checks = env.get("DYNMEM_MODEL_CLIENT") != "openai"
    if plugin_checks:
        check_tool_overhead(fake, project, oc_env, question, after)
    check_a_quoted_question_stores_nothing(project, oc_env, sidecar)  # what the sidecar's client stores

    # session 3: the fact changes
    run_opencode(project, oc_env, "we moved the API to port 7070.")
    sidecar.wait_for("the new port to replace the old one", lambda: (
        "7070" in (ctx := sidecar.recall(project, "what port does the API use?")["context"]) and "9090" not in ctx))

    # session 4, from a subfolder: the same project, only the new value is injected
    start = len(fake.requests)
    run_opencode(project / "src" / "api", oc_env, "what port does the API use?")
    reqs = requests_since(fake, start)
    system = FakeOpenAI.system_of(reqs[0])
    assert "7070" in system and "9090" not in system
    assert "You are a title generator" not in json.dumps(reqs)  # --title skips the title request
    if plugin_checks:
        check_outbox_and_sidecar_down(project, env, oc_env, sidecar, tmp_path)


def check_tool_overhead(fake: FakeOpenAI, project: Path, oc_env: dict[str, str], question: str,
                        after: dict[str, int]) -> None:
    start = len(fake.requests)
    run_opencode(project, {**oc_env, "DYNMEM_TOOLS": "all"}, question)  # the 7 tools of before
    before = plugin_overhead(requests_since(fake, start)[0])
    assert before["tools"] == 7 and before["tool_tokens"] > 3 * after["tool_tokens"], before
    start = len(fake.requests)
    run_opencode(project, {**oc_env, "DYNMEM_TOOLS": "none"}, question)
    none = plugin_overhead(requests_since(fake, start)[0])
    assert none["tools"] == 0 and none["block_tokens"] == after["block_tokens"], none
    print(f"\nplugin overhead per request (bytes/4): default {after}; DYNMEM_TOOLS=all {before}; none {none}")


def check_a_quoted_question_stores_nothing(project: Path, oc_env: dict[str, str], sidecar: SidecarClient) -> None:
    # a question given as one argument (opencode delivers it in literal quotes) stores nothing
    run_opencode(project, oc_env, "Does the API run on port 3000?", one_arg=True)
    sidecar.wait_for("the quoted question in the log", lambda: '\\"Does the API run on port 3000?\\"' in json.dumps(
        sidecar.call("POST", "/v1/log/search", {"project": str(project), "query": "API port 3000"})))
    sidecar.wait_for("its extraction to finish", lambda: jobs_idle(sidecar, project))
    texts = [m["text"] for m in memories_of(sidecar, project)]
    assert not any("3000" in t or "?" in t for t in texts), texts
    assert any("9090" in t for t in texts), texts  # positive control: the facts are there


def check_outbox_and_sidecar_down(project: Path, env: dict[str, str], oc_env: dict[str, str],
                                  sidecar: SidecarClient, tmp_path: Path) -> None:
    # session 5: killed right after session.idle while its send hangs: the turn waits in the outbox
    outbox_dir = tmp_path / "other-home"  # the plugin's data dir in opencode's environment
    assert not pending_outbox(outbox_dir)
    kill_env = {**oc_env, "DYNMEM_AUTOSTART": "0", "DYNMEM_RECALL_TIMEOUT_MS": "1000"}
    with blackhole_sidecar(Path(env["DYNMEM_STATE_DIR"])):
        proc = subprocess.Popen(opencode_cmd(project, "the database is PostgreSQL 16 on host db-main."),
                                cwd=project, env=project_env(project, kill_env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while not any("db-main" in e["body"].get("user", "") for e in pending_outbox(outbox_dir)):
                assert proc.poll() is None, "opencode exited before its turn reached the outbox"
                assert time.monotonic() < deadline, "the turn never reached the outbox"
                time.sleep(0.02)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert [e["route"] for e in pending_outbox(outbox_dir)] == ["/v1/observe"]

    # session 6: the next run replays the outbox
    t0 = time.monotonic()
    run_opencode(project, oc_env, "hello again")
    warm_s = time.monotonic() - t0
    sidecar.wait_for("the killed turn to reach the sidecar", lambda: "db-main" in json.dumps(
        sidecar.call("POST", "/v1/log/search", {"project": str(project), "query": "PostgreSQL db-main"})))
    sidecar.wait_for("the outbox to drain", lambda: not pending_outbox(outbox_dir), timeout_s=10)
    # no runtime npm install happened in the repository (the plugin imports nothing)
    assert not (project / ".opencode" / "node_modules" / "@opencode-ai").exists()

    # session 7: the sidecar is down and cannot be started: fast, one notice
    stop_sidecar(env, sidecar.pid)
    # A start timeout far above a loaded machine's run time: waiting for it would show as a minute or more.
    down_env = {**oc_env, "DYNMEM_BIN": str(tmp_path / "no-such-dynmem"), "DYNMEM_START_TIMEOUT_MS": "90000"}
    t0 = time.monotonic()
    down = run_opencode(project, down_env, "which port does the API use?")
    down_s = time.monotonic() - t0
    assert down.stderr.count("dynmem: memory is off") == 1, down.stderr
    assert "no-such-dynmem does not exist" in down.stderr
    assert down_s < warm_s + 45, (down_s, warm_s)  # not the 90 s start timeout
    # and from the plugin's own log: loaded -> "memory is off" in well under the start timeout
    lines = [json.loads(x) for x in (tmp_path / "other-home" / "logs" / "opencode-plugin.log").read_text().splitlines()]
    loaded = [x for x in lines if x["msg"] == "plugin loaded" and x["pid"] == lines[-1]["pid"]]
    off = [x for x in lines if x["msg"] == "memory is off" and x["pid"] == lines[-1]["pid"]]
    gave_up_s = (_ms(off[0]["ts"]) - _ms(loaded[0]["ts"])) / 1000
    assert gave_up_s < 3, gave_up_s
    print(f"run with the sidecar down: {down_s:.1f} s, memory off after {gave_up_s:.2f} s "
          f"(warm run with it up: {warm_s:.1f} s)")


def _ms(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000
