"""Chooses the model client from settings: the offline ``rules`` client unless configured."""

from __future__ import annotations

from actors.llm.base import ModelClient
from engine.errors import InvalidInput
from engine.settings import ModelSettings


def make_client(settings: ModelSettings) -> ModelClient:
    if settings.client == "rules":
        from actors.llm.rules import RulesClient

        return RulesClient()
    if settings.client == "openai":
        from actors.llm.openai_client import OpenAIClient  # type: ignore[import-not-found]

        return OpenAIClient(settings)  # type: ignore[no-any-return]
    raise InvalidInput(f"unknown model client {settings.client!r}; use 'rules' or 'openai'")
