"""Test tiers: unit tests (default) may not start Ray; ``@pytest.mark.ray`` tests share one
local Ray instance for the whole session; ``@pytest.mark.e2e`` drives the real opencode CLI."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


OPT_IN = ("real_server", "before_after")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Opt-in tiers, deselected unless ``-m`` names them: ``real_server`` (scripts/real-server-tier.sh)
    and ``before_after`` (tests/e2e/test_issue17_failures.py, also against an old checkout)."""
    named = config.getoption("markexpr", "") or ""
    skipped = [m for m in OPT_IN if m not in named]
    dropped = [i for i in items if any(i.get_closest_marker(m) for m in skipped)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if i not in dropped]


@pytest.fixture(autouse=True)
def _forbid_ray_in_unit_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit tests must not start Ray (as Ray Serve's unit tests do)."""
    if request.node.get_closest_marker("ray") or request.node.get_closest_marker("e2e"):
        return
    import ray

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("unit tests may not start Ray; mark the test with @pytest.mark.ray")

    monkeypatch.setattr(ray, "init", refuse)


@pytest.fixture(autouse=True)
def _private_runtime_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own announcement folder for running sidecars (bridge.server.runtime_dir),
    so that sidecars of tests running at the same time never find each other."""
    monkeypatch.setenv("DYNMEM_STATE_DIR", str(tmp_path_factory.mktemp("dynmem-runtime")))


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    """One local Ray for every Ray test of the session."""
    import ray

    from actors.launch import init_ray

    init_ray(num_cpus=2)
    yield
    ray.shutdown()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return d
