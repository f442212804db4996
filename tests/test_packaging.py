"""A wheel built from a clean copy of the sources, installed into a fresh venv outside the
repository, runs ``dynmem --version``, ``dynmem demo`` and ``dynmem serve``.

The fresh venv gets the package only from the wheel. Its third-party dependencies (Ray,
FAISS, ... about 1 GB) are borrowed from the development venv through a ``.pth`` line, so
the test needs no network; a line in a ``.pth`` file only appends a folder to ``sys.path``
(the editable-install hooks of the development venv are not run), and the test checks
that every module of the project is imported from the wheel's files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = ("configs/default.toml", "configs/prompts/extract.md", "configs/prompts/judge.md",
                "examples/shop-api-history.jsonl", "examples/shop-api-questions.json",
                "bridge/opencode/dynmem.js", "bridge/inspector/templates/base.html",
                "bridge/inspector/static/inspector.js", "bridge/inspector/static/inspector.css",
                "actors/llm/data/durable_weights.json", "actors/llm/data/removal_weights.json",
                "actors/llm/data/durable.jsonl", "actors/llm/data/removal.jsonl")


def _clean_copy(dest: Path) -> Path:
    """The files git knows (tracked, or new and not ignored): no .venv, egg-info or build leftovers."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float = 240) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know which files are sources")
    base = tmp_path_factory.mktemp("pkg")
    src = _clean_copy(base / "src")
    dist = base / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(src)],
         cwd=base, env=dict(os.environ), timeout_s=300)
    (found,) = dist.glob("dynamics_memory-*.whl")
    return found


def test_the_wheel_carries_configs_prompts_examples_and_inspector_assets(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [p for p in PACKAGE_DATA if p not in names]
    assert not missing, f"package data missing from the wheel: {missing}"
    assert not any(n.startswith(("tests/", ".venv/")) for n in names)  # positive control above, negative here


def test_wheel_in_a_fresh_venv_runs_version_demo_and_serve(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "fresh"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path, env=dict(os.environ))
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(wheel)],
         cwd=tmp_path, env=dict(os.environ), timeout_s=300)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp_path, env=dict(os.environ)).stdout.strip())
    (site / "_dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DYNMEM_HOME", "RAY_ADDRESS")}
    env.update(RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")

    # Every module of ours comes from the wheel's files, never from the repository.
    where = json.loads(_run([str(py), "-c", (
        "import json, configs, examples, engine, actors, bridge, bridge.inspector, importlib.metadata as m;"
        "print(json.dumps({n: mod.__file__ for n, mod in [('configs', configs), ('examples', examples), ('engine', engine),"
        " ('actors', actors), ('bridge', bridge), ('inspector', bridge.inspector)]} | {'version': m.version('dynamics-memory')}))")],
        cwd=tmp_path, env=env).stdout)
    assert where.pop("version") == "0.1.0"
    for name, file in where.items():
        assert file.startswith(str(site)), f"{name} imported from {file}, not from the installed wheel"

    dynmem = str(venv / "bin" / "dynmem")
    assert _run([dynmem, "--version"], cwd=tmp_path, env=env).stdout.strip() == "dynmem 0.1.0"

    demo = json.loads(_run([dynmem, "demo", "--json", "--data-dir", str(tmp_path / "demo")], cwd=tmp_path, env=env).stdout)
    assert demo["replay"]["turns"] == 178 and demo["replay"]["dead_jobs"] == 0
    assert demo["replay"]["file"].startswith(str(site))  # the bundled history, read as package data
    assert any("7070" in q["context"] for q in demo["answers"]), demo["answers"]

    data = tmp_path / "served"
    info = json.loads(_run([dynmem, "serve", "--detach", "--json", "--data-dir", str(data)], cwd=tmp_path, env=env).stdout)
    try:
        with httpx.Client(base_url=info["url"], timeout=30) as client:
            assert client.get("/v1/health").json()["version"] == "0.1.0"
            assert client.get("/v1/stats", params={"project": "p"}).status_code == 401  # token still required
            page = client.get("/ui/login")
            assert page.status_code == 200 and "dynamics-memory" in page.text  # templates shipped in the wheel
            assert client.get("/docs/static/swagger-ui-bundle.js").status_code == 200  # offline API docs
    finally:
        _run([dynmem, "stop", "--data-dir", str(data)], cwd=tmp_path, env=env, timeout_s=120)
