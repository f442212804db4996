"""Keys decided by meaning: a paraphrased key of the same kind is read as the known one."""

from __future__ import annotations

import numpy as np
import pytest

from engine.keys import key_kind, resolve_key


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


KNOWN = {"api port": unit(1, 0, 0), "frontend port": unit(0, 1, 0), "api host": unit(1, 0, 0.01)}


def test_a_close_key_of_the_same_kind_is_read_as_the_known_key() -> None:
    assert resolve_key("api server port", unit(1, 0.2, 0), KNOWN, 0.8) == "api port"


def test_a_key_of_another_kind_is_never_merged_however_close() -> None:
    assert resolve_key("api server host", unit(1, 0, 0), {"api port": KNOWN["api port"]}, 0.8) == "api server host"
    assert resolve_key("api server host", unit(1, 0, 0), KNOWN, 0.8) == "api host"  # positive control


def test_a_distant_key_stays_its_own() -> None:
    assert resolve_key("worker port", unit(0.5, 0.5, 0.7), KNOWN, 0.8) == "worker port"


def test_a_known_key_is_kept_and_the_threshold_above_one_turns_resolution_off() -> None:
    assert resolve_key("frontend port", unit(1, 0, 0), KNOWN, 0.8) == "frontend port"
    assert resolve_key("api server port", unit(1, 0, 0), KNOWN, 1.01) == "api server port"


def test_the_kind_is_the_last_word() -> None:
    assert key_kind("The API server port") == "port" and key_kind("") == ""


# Pairs written for this threshold (not taken from any benchmark): paraphrases of one subject and
# different subjects of one kind, embedded with the bundled MiniLM model.
PARAPHRASES = [("api port", "api server port"), ("database host", "db host"), ("deploy target", "deployment target"),
               ("session storage", "user session storage"), ("staging url", "staging environment url")]
DIFFERENT = [("api port", "frontend port"), ("api port", "database port"), ("staging url", "production url"),
             ("staging db host", "prod db host"), ("unit test command", "integration test command"),
             ("admin port", "api port"), ("session storage", "cart storage")]


@pytest.fixture(scope="module")
def minilm():
    from actors.embedder import make_embedder

    return make_embedder("minilm")


def test_with_the_bundled_embedder_paraphrases_merge_and_other_subjects_do_not(minilm) -> None:
    from engine.settings import Settings

    tau = Settings().ingest.tau_key
    for a, b in PARAPHRASES:
        va, vb = (unit(*v) for v in minilm.embed([a, b]))
        assert resolve_key(b, vb, {a: va}, tau) == a, (a, b)
    for a, b in DIFFERENT:
        va, vb = (unit(*v) for v in minilm.embed([a, b]))
        assert resolve_key(b, vb, {a: va}, tau) == b, (a, b)
