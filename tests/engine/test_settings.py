"""One source of defaults: the settings models; ``configs/default.toml`` is generated from them."""

from __future__ import annotations

import tomllib

from pydantic import BaseModel

from configs import bundled
from engine.settings import Settings, default_toml, env_only, field_reason


def _every_setting() -> list[tuple[str, type[BaseModel], str]]:
    out = []
    for section_name, section_field in Settings.model_fields.items():
        section = section_field.annotation
        assert isinstance(section, type) and issubclass(section, BaseModel)
        out += [(section_name, section, name) for name in section.model_fields]
    return out


def test_bundled_default_toml_is_the_one_generated_from_the_models() -> None:
    bundled_text = bundled("default.toml").read_text(encoding="utf-8")
    assert bundled_text == default_toml(), "regenerate it: python -m engine.settings > configs/default.toml"


def test_every_setting_has_a_description_and_a_reason() -> None:
    settings = _every_setting()
    missing = [f"{sec}.{name}" for sec, section, name in settings
               if not (section.model_fields[name].description or "").strip() or not field_reason(section, name).strip()]
    assert not missing, f"settings without a description or a reason: {missing}"
    assert len(settings) > 60  # positive control: every section was walked


def test_generated_toml_holds_every_default_and_no_secret() -> None:
    data = tomllib.loads(default_toml())
    assert Settings.model_validate(data) == Settings()
    secrets = [(sec, name) for sec, section, name in _every_setting() if env_only(section, name)]
    assert secrets == [("model", "openai_api_key")]
    assert "openai_api_key" not in data["model"] and "openai_model" in data["model"]


def test_each_line_of_the_toml_says_what_and_why() -> None:
    text = default_toml()
    assert 'lam = 0.02  # per-step decay of a memory\'s value V\n#   why: DESIGN §4' in text
    assert text.count("#   why: ") == sum(1 for _, s, n in _every_setting() if not env_only(s, n))
