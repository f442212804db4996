"""Chooses the model client from settings: the offline ``rules`` client unless configured."""

from __future__ import annotations

from pathlib import Path

from actors.llm.base import ModelClient
from engine.errors import InvalidInput
from engine.settings import ModelSettings


def make_client(settings: ModelSettings, data_dir: Path | None = None) -> ModelClient:
    """The configured client; ``data_dir`` places the openai client's reply cache."""
    if settings.client == "rules":
        from actors.llm.rules import RulesClient

        return RulesClient(profile=settings.extraction_profile)
    if settings.client == "openai":
        from actors.llm.openai_client import OpenAIClient

        return OpenAIClient(settings, data_dir)
    raise InvalidInput(f"unknown model client {settings.client!r}; use 'rules' or 'openai'")
