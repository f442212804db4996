"""A foreign distribution named like one of our top-level packages (``actors``, ``eval``) fails clearly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bridge.packages import OWN, package_conflicts, shadowed

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, path: list[Path]) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": ":".join(map(str, path)), "PATH": "/usr/bin:/bin", "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run([sys.executable, "-c", code], cwd=path[0], env=env, capture_output=True, text=True,
                          timeout=120)


def _foreign_actors(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "actors").mkdir(parents=True)
    (site / "actors" / "__init__.py").write_text("ACTORS = 'a different project'\n")
    dist = site / "actors-1.0.dist-info"  # what `pip install actors` would leave
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: actors\nVersion: 1.0\n")
    (dist / "top_level.txt").write_text("actors\n")
    return site


def test_this_installation_has_no_conflict() -> None:
    assert shadowed() == [] and package_conflicts() == []
    assert {"actors", "eval"} <= set(OWN)


def test_a_foreign_actors_first_on_the_path_stops_the_cli_with_one_line(tmp_path: Path) -> None:
    site = _foreign_actors(tmp_path)
    run = _python("import bridge.cli", [ROOT, site])  # ours first: no conflict (positive control)
    assert run.returncode == 0, run.stderr
    run = _python("import bridge.cli", [site, ROOT])  # a foreign actors first on the path
    assert run.returncode == 1
    [line] = run.stderr.strip().splitlines()
    assert line.startswith("error[package_conflict]: 'actors' is imported from ")
    assert str(site / "actors") in line and "virtual environment of its own" in line


def test_doctor_names_a_foreign_distribution_even_when_ours_comes_first(tmp_path: Path) -> None:
    site = _foreign_actors(tmp_path)
    run = _python("from bridge.packages import package_conflicts, shadowed; print(shadowed()); print(package_conflicts())",
                  [ROOT, site])
    assert run.returncode == 0, run.stderr
    first, second = run.stdout.strip().splitlines()
    assert first == "[]"  # ours is imported: nothing shadowed yet ...
    assert "the distribution actors also installs a top-level 'actors'" in second  # ... but a reinstall may overwrite it
