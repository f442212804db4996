"""Runtime construction rules that need no Ray: live clients never cross a process boundary."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.adjudication_actor import AdjudicationService
from actors.extraction_actor import ExtractionService
from actors.investigator_actor import InvestigatorService
from actors.launch import Runtime
from actors.llm.rules import RulesClient
from engine.errors import InvalidInput
from engine.settings import EmbedderSettings, Settings


def settings() -> Settings:
    return Settings(embedder=EmbedderSettings(name="hash"))


def test_a_client_factory_is_refused_on_ray_before_ray_starts(tmp_path: Path) -> None:
    # unit tests may not start Ray (conftest): reaching ray.init would raise RuntimeError instead
    with pytest.raises(InvalidInput, match="in process only"):
        Runtime(tmp_path, settings(), use_ray=True, client_factory=RulesClient)


def test_in_process_services_build_their_client_from_settings_or_take_a_test_client(tmp_path: Path) -> None:
    rt = Runtime(tmp_path, settings(), use_ray=False)
    try:
        for ref in (*rt.extractors, rt.adjudicator, rt.investigator):
            assert ref.ping() == "rules"
        built = {cls: args for cls, args in rt.spawned}
        for cls in (ExtractionService, AdjudicationService, InvestigatorService):
            assert built[cls] == (rt.settings.model, rt.data_dir)  # plain settings, not a client
    finally:
        rt.shutdown()

    class Named(RulesClient):
        name = "named"

    rt = Runtime(tmp_path / "b", settings(), use_ray=False, client_factory=Named)
    try:
        assert rt.adjudicator.ping() == "named" and rt.investigator.ping() == "named"
    finally:
        rt.shutdown()


def test_a_second_shutdown_calls_no_actor(tmp_path: Path) -> None:
    """On Ray a call to a stopped actor waits for Ray to give up on it; a second shutdown (a test's own
    and its fixture's) must not make any."""
    rt = Runtime(tmp_path, settings(), use_ray=False)
    calls: list[str] = []

    class Recording:
        def close(self) -> None:
            calls.append("close")

    rt.global_engine = Recording()  # type: ignore[assignment]
    rt.shutdown()
    assert calls == ["close"]  # positive control: the first shutdown closes it
    rt.shutdown()
    assert calls == ["close"]


def _hash_settings(nice: int) -> Settings:
    base = Settings()
    return base.model_copy(update={"embedder": EmbedderSettings(name="hash"),
                                   "runtime": base.runtime.model_copy(update={"background_nice": nice})})


@pytest.mark.ray
def test_model_work_runs_below_the_actors_that_answer_the_agent(ray_session: None, tmp_path: Path) -> None:
    """Extraction, judging and repair yield the CPU to the log, engine and index actors (issue 17)."""
    from actors.launch import priority

    rt = Runtime(tmp_path / "a", _hash_settings(7))
    try:
        engine = rt.engine("p").ref.call(priority)
        log = rt.log("p").ref.call(priority)
        index = rt.index.ref.call(priority)
        background = [ref.ref.call(priority) for ref in (*rt.extractors, rt.adjudicator, rt.investigator)]
        assert engine == log == index
        assert all(b == min(19, engine + 7) for b in background), (engine, background)
    finally:
        rt.shutdown()
    # positive control: with background_nice 0, model work runs at the same priority
    rt = Runtime(tmp_path / "b", _hash_settings(0))
    try:
        assert rt.extractors[0].ref.call(priority) == rt.engine("p").ref.call(priority)
    finally:
        rt.shutdown()
