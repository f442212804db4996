"""Snapshots of the lexical and vector indexes: used when current, never when stale, gone after a purge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from actors.clock import FakeClock
from actors.config import load_settings
from actors.launch import Runtime
from actors.pipeline import Pipeline
from actors.store.snapshots import LEXICAL_FILE, VECTORS_FILE, load_lexical, save_lexical
from actors.wire import ForgetRequest, RecallRequest, RememberRequest
from engine.lexical import BM25Index

FACTS = [
    "The billing API listens on port 8443.",
    "Deploys of the storefront go out on Thursdays.",
    "The search worker reads from the queue orders-events.",
    "Use pnpm, not npm, in the web workspace.",
    "The staging database is pg-staging-3.",
]
QUESTIONS = ["which port does the billing API listen on?", "when do storefront deploys go out?",
             "which queue does the search worker read?", "which package manager in the web workspace?"]


def _open(data: Path) -> tuple[Runtime, Pipeline]:
    rt = Runtime(data, load_settings(), use_ray=False, clock=FakeClock())
    return rt, Pipeline(rt)


def _answers(pipe: Pipeline) -> list[tuple[str, ...]]:
    return [tuple(m.id for m in pipe.recall(RecallRequest(project="p", query=q, passive=True)).memories)
            for q in QUESTIONS]


def _folder(data: Path) -> Path:
    return next((data / "projects").iterdir())


def _loaded(rt: Runtime) -> tuple[bool, bool]:
    """Whether the project's engine opened its lexical and its vector index from their snapshots."""
    engine = rt.engine("p").target
    return bool(engine._saved_token), bool(engine._vectors_token)


def test_a_closed_store_opens_from_its_snapshots_with_the_same_answers(tmp_path: Path) -> None:
    rt, pipe = _open(tmp_path)
    for text in FACTS:
        pipe.remember(RememberRequest(project="p", text=text))
    before = _answers(pipe)
    assert _loaded(rt) == (False, False)  # positive control: a new store has nothing to load
    rt.shutdown()
    assert (_folder(tmp_path) / LEXICAL_FILE).exists() and (_folder(tmp_path) / VECTORS_FILE).exists()
    rt, pipe = _open(tmp_path)
    try:
        assert _loaded(rt) == (True, True)
        assert _answers(pipe) == before and all(before)
        # Live recalls credit values: the content is the same, so the snapshots stay current.
        token = rt.engine("p").target.store.content_token()
        pipe.recall(RecallRequest(project="p", query=QUESTIONS[0]))
        assert rt.engine("p").target.store.content_token() == token
    finally:
        rt.shutdown()


def test_a_snapshot_older_than_the_store_is_never_used(tmp_path: Path) -> None:
    rt, pipe = _open(tmp_path)
    for text in FACTS:
        pipe.remember(RememberRequest(project="p", text=text))
    rt.shutdown()
    old = tmp_path / "old-snapshots"
    shutil.copytree(_folder(tmp_path), old)
    rt, pipe = _open(tmp_path)
    target = next(m for m in pipe.memories("p") if "8443" in m.text)
    pipe.forget(ForgetRequest(project="p", memory_id=target.id))
    pipe.remember(RememberRequest(project="p", text="The billing API moved to port 9443."))
    rt.shutdown()
    for name in (LEXICAL_FILE, VECTORS_FILE, VECTORS_FILE + ".npz"):  # as if the last close never ran
        shutil.copy(old / name, _folder(tmp_path) / name)
    rt, pipe = _open(tmp_path)
    try:
        assert _loaded(rt) == (False, False)
        context = pipe.recall(RecallRequest(project="p", query=QUESTIONS[0], passive=True)).context
        assert "9443" in context and "8443" not in context
    finally:
        rt.shutdown()
    rt, pipe = _open(tmp_path)  # positive control: the close after that open saved current snapshots
    try:
        assert _loaded(rt) == (True, True)
    finally:
        rt.shutdown()


@pytest.mark.parametrize("damaged", [LEXICAL_FILE, VECTORS_FILE, VECTORS_FILE + ".npz"])
def test_a_damaged_snapshot_is_rebuilt_from_the_store(tmp_path: Path, damaged: str) -> None:
    rt, pipe = _open(tmp_path)
    for text in FACTS:
        pipe.remember(RememberRequest(project="p", text=text))
    before = _answers(pipe)
    rt.shutdown()
    path = _folder(tmp_path) / damaged
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    rt, pipe = _open(tmp_path)
    try:
        assert _loaded(rt) == (damaged != LEXICAL_FILE, damaged == LEXICAL_FILE)
        assert _answers(pipe) == before and all(before)
    finally:
        rt.shutdown()


def test_a_purge_leaves_its_text_in_no_snapshot(tmp_path: Path) -> None:
    phrase = b"quokka-ledger-7781"
    rt, pipe = _open(tmp_path)
    pipe.remember(RememberRequest(project="p", text=f"The nightly export bucket is {phrase.decode()}."))
    for text in FACTS:
        pipe.remember(RememberRequest(project="p", text=text))
    rt.shutdown()
    snapshots = [_folder(tmp_path) / LEXICAL_FILE]
    assert all(phrase in p.read_bytes() for p in snapshots)  # positive control: the tokens are in it
    rt, pipe = _open(tmp_path)
    try:
        assert _loaded(rt) == (True, True)
        target = next(m for m in pipe.memories("p") if phrase.decode() in m.text)
        pipe.forget(ForgetRequest(project="p", memory_id=target.id, purge=True))
        assert not any(p.exists() for p in snapshots)
    finally:
        rt.shutdown()
    assert (_folder(tmp_path) / LEXICAL_FILE).exists()  # saved again at close, without the purged memory
    assert [p for p in tmp_path.rglob("*") if p.is_file() and phrase in p.read_bytes()] == []


def test_the_lexical_snapshot_belongs_to_one_content_token(tmp_path: Path) -> None:
    idx = BM25Index()
    idx.add_many([("a", "the api port is 8080"), ("b", "deploys go out on friday"), ("c", "src/api/main.py")])
    idx.remove("b")
    path = tmp_path / LEXICAL_FILE
    save_lexical(path, "t1", idx)
    assert load_lexical(path, "t2") is None
    back = load_lexical(path, "t1")
    assert back is not None and back.search("api port", 10) == idx.search("api port", 10) != {}
    back.remove("a")  # an index read back takes removals (its terms come from the arrays)
    assert "a" not in back.search("api port", 10) and "c" in back.search("api", 10)
