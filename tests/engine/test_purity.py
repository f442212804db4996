"""engine/ is pure: no Ray, SQLite, FAISS, model clients, HTTP, environment or clock."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"
FORBIDDEN_MODULES = {"ray", "sqlite3", "faiss", "openai", "httpx", "requests", "fastapi", "uvicorn", "random", "socket", "subprocess", "actors", "bridge"}
FORBIDDEN_CALLS = {("os", "environ"), ("os", "getenv"), ("time", "time"), ("time", "time_ns"), ("datetime", "now"), ("time", "monotonic")}


def violations(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in FORBIDDEN_MODULES:
            found.append(node.module)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (node.value.id, node.attr) in FORBIDDEN_CALLS:
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_engine_imports_nothing_impure() -> None:
    files = sorted(ENGINE.rglob("*.py"))
    assert len(files) >= 10
    bad = {str(f.relative_to(ENGINE)): v for f in files if (v := violations(f.read_text()))}
    assert bad == {}


def test_the_checker_catches_impure_code() -> None:  # positive control for the test above
    assert violations("import sqlite3\nimport os\nx = os.environ['A']\nfrom ray import remote\nt = time.time()") == [
        "sqlite3", "ray", "os.environ", "time.time"] or set(violations("import sqlite3\nimport os\nx = os.environ['A']\nfrom ray import remote\nt = time.time()")) == {"sqlite3", "ray", "os.environ", "time.time"}
