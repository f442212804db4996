"""docs/architecture.md and the README's "Where to look" name modules that exist (sqlite-utils' tests/test_docs.py idea)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `engine/ingest.py`, `actors/store/`, `actors/*_actor.py`, `engine/ingest.py:supersede`
_PATH = re.compile(r"`((?:engine|actors|bridge|configs|eval|examples|scripts|tests|docs)/[\w*./-]*)(?::(\w+))?`")


def _references(text: str) -> list[tuple[str, str | None]]:
    return [(m.group(1), m.group(2)) for m in _PATH.finditer(text)]


def _defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
    return False


def _broken(text: str) -> list[str]:
    broken = []
    for ref, name in _references(text):
        matches = list(ROOT.glob(ref.rstrip("/"))) if "*" in ref else [ROOT / ref]
        if not matches or not all(m.exists() for m in matches):
            broken.append(ref)
        elif name is not None and not _defines(matches[0], name):
            broken.append(f"{ref}:{name}")
    return broken


def test_architecture_names_only_modules_and_names_that_exist() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    refs = _references(text)
    assert len(refs) > 40 and any(name for _, name in refs)  # positive control: the pattern finds the references
    assert not _broken(text), f"docs/architecture.md names what does not exist: {_broken(text)}"
    assert _broken("`engine/signals.py` and `engine/ingest.py:no_such_step`") == ["engine/signals.py",
                                                                                  "engine/ingest.py:no_such_step"]


def test_readme_where_to_look_names_modules_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("Where to look:", 1)[1].split("\n## ", 1)[0]
    assert len(_references(section)) > 15
    assert not _broken(section), f"README 'Where to look' names what does not exist: {_broken(section)}"
