"""Settings from the environment are coerced by field type; the environment is read in one module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from actors.config import ENVIRONMENT, env, load_settings
from engine.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[2]

# Modules that may touch os.environ besides actors/config.py, and why.
ALLOWED = {
    # Starts its sidecar with a copy of the environment and its own DYNMEM_STATE_DIR (never announced as the user's).
    "eval/perf/http_hop.py",
    # Hands the benchmark's child processes a copy of the environment with their BLAS thread counts and core type.
    "eval/perf/throughput.py",
    # Records the BLAS thread variables of the machine in a report's machine facts.
    "eval/perf/measure.py",
    # Starts the fake model server as a child process with this checkout on its PYTHONPATH.
    "eval/perf/replay_throughput.py",
    # Reads and sets the BLAS/OpenMP thread counts and OpenBLAS core type of the embedding measurement's children.
    "eval/perf/onnx_embed.py",
}


def test_environment_values_are_coerced_by_the_type_of_their_field() -> None:
    plain = load_settings(environ={})
    assert (plain.model.openai_model, plain.retrieval.k, plain.review.allow_agent) == ("", 5, False)
    s = load_settings(environ={"DYNMEM_OPENAI_MODEL": "1", "DYNMEM_RETRIEVAL_K": "8", "DYNMEM_MODEL_TIMEOUT_S": "180",
                               "DYNMEM_REVIEW_ALLOW_AGENT": "true", "DYNMEM_EMBEDDER": "hash",
                               "DYNMEM_OPENAI_API_KEY": "12345"})
    assert s.model.openai_model == "1"  # a str field keeps the text, even when it reads as a number
    assert s.model.openai_api_key == "12345"
    assert (s.retrieval.k, s.model.timeout_s, s.review.allow_agent, s.embedder.name) == (8, 180.0, True, "hash")


def test_an_environment_value_of_the_wrong_type_is_a_clear_error() -> None:
    with pytest.raises(InvalidInput, match=r"^bad setting retrieval\.k: ") as info:
        load_settings(environ={"DYNMEM_RETRIEVAL_K": "many"})
    assert info.value.code == "invalid_input"
    assert load_settings(environ={"DYNMEM_RETRIEVAL_K": "7"}).retrieval.k == 7  # positive control


def test_env_reads_only_documented_variables() -> None:
    assert env("DYNMEM_PROJECT", {"DYNMEM_PROJECT": "shop-api"}) == "shop-api"
    assert env("DYNMEM_PROJECT", {}) == ""
    with pytest.raises(KeyError, match="HOME_SWEET_HOME"):
        env("HOME_SWEET_HOME", {"HOME_SWEET_HOME": "x"})
    assert all(text.strip() for text in ENVIRONMENT.values())


def _reads_environment(path: Path) -> list[int]:
    """Lines of ``path`` that touch ``os.environ``/``os.getenv`` (or import them from os)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
                and node.attr in ("environ", "environb", "getenv", "getenvb", "putenv", "unsetenv")):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                a.name in ("environ", "environb", "getenv", "getenvb") for a in node.names):
            lines.append(node.lineno)
    return lines


def test_no_module_but_actors_config_reads_the_environment() -> None:
    found = {}
    for folder in ("engine", "actors", "bridge", "eval", "configs", "examples", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = _reads_environment(path)
            if lines:
                found[path.relative_to(ROOT).as_posix()] = lines
    assert "actors/config.py" in found  # positive control: the scan sees a read
    assert set(ALLOWED) <= set(found), "an allowed module no longer reads the environment: drop it from ALLOWED"
    others = {p: lines for p, lines in found.items() if p != "actors/config.py" and p not in ALLOWED}
    assert not others, f"read the environment through actors.config.env (or load_settings): {others}"
