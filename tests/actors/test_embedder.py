from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from actors.embedder import (
    Embedder,
    HashEmbedder,
    MiniLMEmbedder,
    bundled_model_dir,
    gelu,
    identifier_tokens,
    make_embedder,
)
from engine.errors import IndexError_, InvalidInput


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    model = MiniLMEmbedder(batch_size=4)
    model.load()
    return model


# -- numpy kernels -------------------------------------------------------------


def test_gelu_matches_the_math_erf_gelu_within_1e6_over_a_wide_grid() -> None:
    grid = np.linspace(-8.0, 8.0, 200_001)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in grid])
    got = gelu(grid.astype(np.float32)).astype(np.float64)
    assert np.abs(got - expected).max() < 1e-6
    # control: a GELU whose erf is off by 1e-5 is caught by the same bound
    assert np.abs(got + 1e-5 * np.abs(grid) - expected).max() > 1e-6


def test_gelu_overwrites_its_input_and_uses_the_scratch_arrays_given() -> None:
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0], dtype=np.float32)
    expected = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    scratch = [np.full_like(x, np.nan) for _ in range(4)]
    out = gelu(x, scratch)
    assert out is x
    np.testing.assert_allclose(x, expected, atol=1e-6)
    assert all(not np.isnan(s).any() for s in scratch)  # they were written, not ignored


def test_gelu_is_the_erf_form_not_the_tanh_approximation() -> None:
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    got = gelu(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, exact, atol=1e-6)
    assert np.abs(got - tanh_form).max() > 1e-4  # control: the two forms are distinguishable


# -- MiniLM ----------------------------------------------------------------------


def test_minilm_reproduces_the_published_sentence_transformers_similarities(minilm: MiniLMEmbedder) -> None:
    # sentence-transformers quickstart (README and docs) for all-MiniLM-L6-v2, printed to 4 places.
    e = minilm.embed(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    sims = e @ e.T
    assert sims[0, 1] == pytest.approx(0.6660, abs=6e-4)
    assert sims[0, 2] == pytest.approx(0.1046, abs=6e-4)
    assert sims[1, 2] == pytest.approx(0.1411, abs=6e-4)


def test_minilm_returns_float32_unit_rows_of_width_384(minilm: MiniLMEmbedder) -> None:
    e = minilm.embed(["the api listens on port 9090", "", "ünïcödé and 日本語 text"])
    assert e.shape == (3, 384) and e.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-6)
    assert minilm.embed([]).shape == (0, 384)


def test_padding_and_length_sorting_do_not_change_any_row(minilm: MiniLMEmbedder) -> None:
    texts = [
        "ok",
        "the scheduler hangs when two requests race for the same lock file in the data directory",
        "port 9090",
        "we pinned numpy below 2.0 because the faiss wheel was built against the old ABI",
        "ship it",
        "CI is red again",
    ]
    batched = minilm.embed(texts)  # batch_size 4: two batches, sorted by length, padded
    singles = np.vstack([minilm.embed([t]) for t in texts])
    assert np.abs(batched - singles).max() < 1e-5
    # control: rows really are in input order and distinct
    assert int(np.argmax(batched @ singles[2])) == 2
    assert float(batched[0] @ batched[1]) < 0.9


def test_texts_longer_than_256_word_pieces_are_truncated(minilm: MiniLMEmbedder) -> None:
    long = " ".join(f"step {i} of the deploy checklist" for i in range(120))  # ~700 pieces
    short = "the deploy checklist"
    tail = " and then the database catches fire"
    long_pair = minilm.embed([long, long + tail])
    short_pair = minilm.embed([short, short + tail])
    assert np.abs(long_pair[0] - long_pair[1]).max() < 1e-6  # tail lies past token 256
    assert np.abs(short_pair[0] - short_pair[1]).max() > 1e-2  # control: the tail matters when seen


PARAPHRASES = [
    ("the api listens on port 9090", "which port does the backend use?", "we use pnpm for packages"),
    ("run the tests with pytest -q", "how do I execute the test suite?", "the logo is blue"),
    ("we store user sessions in redis", "where are login sessions kept?", "the docs are in markdown"),
    ("deploys happen every friday afternoon", "when do we release to production?", "the db uses utf8"),
    ("the staging server is out of disk space", "staging ran out of storage", "add a test for the parser"),
    ("don't commit secrets to git", "never push credentials into the repository", "the timeout is 30 s"),
    ("bump the version before tagging a release", "increase the version number prior to the release tag",
     "postgres runs in docker"),
    ("the linter complains about unused imports", "ruff flags imports that are never used",
     "the payment webhook retries three times"),
    ("memory spikes when we load the whole csv", "reading the entire csv file blows up RAM",
     "the design review is on monday"),
    ("the build fails because node 16 is too old", "CI breaks since our Node version is outdated",
     "the cache expires after an hour"),
]


def test_paraphrases_sit_closer_than_unrelated_developer_chat(minilm: MiniLMEmbedder) -> None:
    margins = []
    for text, paraphrase, unrelated in PARAPHRASES:
        a, p, u = minilm.embed([text, paraphrase, unrelated])
        margins.append(float(a @ p - a @ u))
    assert min(margins) > 0.15, margins


FACTS = [
    "The API server listens on port 9090.",
    "Releases are deployed by a GitHub Actions workflow that runs on version tags.",
    "Database migrations are in db/migrations and are applied with alembic upgrade head.",
    "The staging database password is stored in Vault at secret/staging/db.",
    "Install JavaScript dependencies with pnpm, never npm.",
    "The integration tests start Redis in a Docker container.",
    "Logs go to Grafana Loki and are retained for 14 days.",
    "Sessions expire after 30 minutes of inactivity.",
    "Feature flags are managed in LaunchDarkly.",
    "A backup runs nightly at 02:00 UTC into an S3 bucket.",
    "ruff enforces the code style with a line length of 100.",
    "The mobile app calls the backend over GraphQL.",
]
QUESTIONS = [
    "Which port does the backend use?",
    "How do we ship a new release?",
    "How do I apply schema changes?",
    "Where are the staging DB credentials?",
    "Which package manager do we use for node modules?",
    "Why do integration tests need docker?",
    "How long do we keep logs?",
    "When does a user get logged out automatically?",
    "How do we toggle features?",
    "When are backups taken?",
    "What is the maximum line width?",
    "What API style does the phone app use?",
]


def test_questions_retrieve_their_own_fact_top1(minilm: MiniLMEmbedder) -> None:
    sims = minilm.embed(QUESTIONS) @ minilm.embed(FACTS).T
    hits = sum(int(np.argmax(row)) == i for i, row in enumerate(sims))
    assert hits >= 10, hits
    hashed = HashEmbedder()
    hash_sims = hashed.embed(QUESTIONS) @ hashed.embed(FACTS).T
    hash_hits = sum(int(np.argmax(row)) == i for i, row in enumerate(hash_sims))
    assert hash_hits < hits  # control: the check can tell a weak embedder apart


def test_minilm_loads_cold_from_the_bundled_package() -> None:
    # its load time is a benchmark figure (eval/perf/embedders.py), not asserted here
    vector = MiniLMEmbedder().embed(["cold start"])
    assert vector.shape == (1, 384)


def test_missing_model_files_raise_index_error(tmp_path: Path, minilm: MiniLMEmbedder) -> None:
    with pytest.raises(IndexError_, match="cannot load embedding model"):
        MiniLMEmbedder(model_dir=tmp_path).embed(["x"])
    assert minilm.embed(["x"]).shape == (1, 384)  # control: the bundled files load


def test_embed_rejects_a_bare_string_and_non_str_items() -> None:
    for embedder in (HashEmbedder(), MiniLMEmbedder()):
        with pytest.raises(InvalidInput):
            embedder.embed("one string")
        with pytest.raises(InvalidInput):
            embedder.embed(["ok", 3])  # type: ignore[list-item]
        assert embedder.embed(["ok"]).shape == (1, embedder.dim)


# -- factory, protocol, hash embedder ---------------------------------------------------


def test_make_embedder_builds_known_names_and_rejects_others() -> None:
    assert isinstance(make_embedder("minilm"), MiniLMEmbedder)
    assert isinstance(make_embedder("hash"), HashEmbedder)
    assert make_embedder("minilm", batch_size=8).batch_size == 8  # type: ignore[attr-defined]
    with pytest.raises(InvalidInput, match="unknown embedder"):
        make_embedder("bert-large")


def test_both_embedders_satisfy_the_protocol() -> None:
    for embedder in (make_embedder("minilm"), make_embedder("hash")):
        assert isinstance(embedder, Embedder)
        assert embedder.dim == 384 and embedder.name in ("minilm-l6-v2", "hash")


def test_identifier_tokens_split_camel_snake_and_paths() -> None:
    tokens = identifier_tokens("parseHTTPRequest in api_server.py")
    assert tokens[:4] == ["parsehttprequest", "parse", "http", "request"]
    assert {"api_server.py", "api", "server", "py", "in"} <= set(tokens)
    assert identifier_tokens("port 9090") == ["port", "9090"]


def test_hash_embedder_is_deterministic_and_unit_norm() -> None:
    texts = ["retry_policy in worker.py", "", "!!!"]
    a, b = HashEmbedder().embed(texts), HashEmbedder().embed(texts)
    assert a.dtype == np.float32 and a.shape == (3, 384)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)
    assert HashEmbedder(dim=64).embed(["x"]).shape == (1, 64)


def test_hash_embedder_matches_identifier_parts_over_unrelated_text() -> None:
    emb = HashEmbedder()
    query, related, unrelated = emb.embed(
        ["where is the retry policy?", "RetryPolicy lives in worker/retry_policy.py", "the logo is blue"]
    )
    assert float(query @ related) > float(query @ unrelated) + 0.1


# -- pinned vectors: a faster forward pass must give the vectors the stores already hold ----

PINNED = Path(__file__).resolve().parents[1] / "fixtures" / "minilm_pinned.npz"


def _pinned() -> tuple[list[str], np.ndarray]:
    data = np.load(PINNED, allow_pickle=False)
    return [str(t) for t in data["texts"]], np.asarray(data["vectors"], dtype=np.float32)


def _assert_same_vectors(got: np.ndarray, want: np.ndarray) -> None:
    """Equal within float32 noise: max |diff| <= 1e-5 and every cosine >= 0.99999."""
    assert got.shape == want.shape and got.dtype == np.float32
    assert float(np.abs(got - want).max()) <= 1e-5
    assert float(np.sum(got * want, axis=1).min()) >= 0.99999


def test_pinned_texts_are_the_ones_the_fixture_script_lists() -> None:
    from tests.fixtures.make_minilm_pinned import PINNED_TEXTS

    texts, vectors = _pinned()
    assert tuple(texts) == PINNED_TEXTS and vectors.shape == (len(texts), 384)


BACKENDS = ["onnx", "numpy"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("batch_size", [1, 3, 16, 64])
def test_vectors_equal_the_pinned_ones_one_by_one_and_in_batches(batch_size: int, backend: str) -> None:
    texts, want = _pinned()
    model = MiniLMEmbedder(batch_size=batch_size, backend=backend)
    _assert_same_vectors(model.embed(texts), want)
    _assert_same_vectors(np.vstack([model.embed([t]) for t in texts[::7]]), want[::7])


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_embeds_from_two_threads_each_get_the_pinned_vectors(backend: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts, want = _pinned()
    minilm = MiniLMEmbedder(batch_size=4, backend=backend)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda _: minilm.embed(texts), range(4)))
    for got in results:
        _assert_same_vectors(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_slightly_perturbed_weight_fails_the_pin(tmp_path: Path, backend: str) -> None:
    # Positive control for the pin: scale one feed-forward matrix of one layer by 1.0005.
    from safetensors.numpy import load_file, save_file

    source = bundled_model_dir()
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    tensors = load_file(str(source / "model.safetensors"))
    key = "encoder.layer.3.intermediate.dense.weight"
    tensors[key] = (tensors[key] * np.float32(1.0005)).astype(tensors[key].dtype)
    save_file(tensors, str(tmp_path / "model.safetensors"))
    texts, want = _pinned()
    got = MiniLMEmbedder(model_dir=tmp_path, backend=backend).embed(texts)
    with pytest.raises(AssertionError):
        _assert_same_vectors(got, want)
    assert float(np.sum(got * want, axis=1).min()) > 0.999  # still the same model, only nudged


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_threads_that_find_the_embedder_cold_both_get_its_vectors(backend: str) -> None:
    import threading

    emb, start, out = MiniLMEmbedder(backend=backend), threading.Barrier(2), {}

    def run(i: int) -> None:
        start.wait()
        out[i] = emb.embed(["the relay answers on :7446"])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert set(out) == {0, 1} and np.allclose(out[0], out[1], atol=1e-6)


def test_auto_backend_is_onnx_runtime_when_it_imports_and_the_settings_reach_the_embedder() -> None:
    from engine.settings import EmbedderSettings

    auto = MiniLMEmbedder()
    auto.load()
    assert auto.backend == "onnx"  # onnx and onnxruntime are dependencies of the project
    built = make_embedder("minilm", settings=EmbedderSettings(backend="numpy", threads=1))
    assert isinstance(built, MiniLMEmbedder) and (built.backend, built.threads) == ("numpy", 1)


def test_auto_backend_falls_back_to_numpy_when_onnx_runtime_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from actors import minilm_onnx

    monkeypatch.setattr(minilm_onnx, "available", lambda: False)
    model = MiniLMEmbedder()
    texts, want = _pinned()
    _assert_same_vectors(model.embed(texts[:4]), want[:4])
    assert model.backend == "numpy"


def test_an_unknown_backend_or_thread_count_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="backend"):
        MiniLMEmbedder(backend="tensorrt")
    with pytest.raises(InvalidInput, match="threads"):
        MiniLMEmbedder(threads=0)
