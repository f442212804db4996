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
