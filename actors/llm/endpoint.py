"""One OpenAI-compatible endpoint, called carefully: the only module that touches ``openai``.

Every request goes through :meth:`Endpoint._call`, which adds what the ``openai``
package's own retry loop does not give us (its retries are switched off with
``max_retries=0`` so ours are the only ones):

- a semaphore (``max_concurrency`` requests in flight) and a token bucket
  (``rate_limit_per_min``, a burst of a tenth of a minute's allowance);
- retries on 408/409/429/5xx, timeouts and connection errors, with jittered exponential
  backoff (``retry_base_s * 2**n``, half fixed and half random, capped at ``retry_max_s``)
  that honours ``Retry-After``;
- a circuit breaker: after ``breaker_failures`` consecutive failed requests every call
  raises :class:`ModelUnavailable` at once for ``breaker_cooldown_s``; the next request
  after the cooldown is a probe (success closes the circuit, failure reopens it).

``openai`` exceptions are translated here and never escape::

    timeout after retries          -> ModelTimeout
    429 / 5xx / connection / open  -> ModelUnavailable   (callers defer the job)
    body not JSON or wrong shape   -> ModelBadReply      (callers retry the job later)
    401 / 403 / 404 / other 4xx    -> EndpointRejected (a ModelError), with the status
    5xx naming a request field     -> EndpointRejected (llama.cpp refuses json_schema with a 500)
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import openai
import pydantic

from engine.errors import InvalidInput, ModelBadReply, ModelError, ModelTimeout, ModelUnavailable
from engine.redact import redact
from engine.settings import ModelSettings

T = TypeVar("T")

#: Statuses worth another try (the same set the openai package retries by default).
_RETRY_STATUS = frozenset({408, 409, 429})


class EndpointRejected(ModelError):
    """The endpoint refused the request (a 4xx other than 408/409/429); not retried."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class CircuitBreaker:
    """Opens after ``failures`` consecutive failures, for ``cooldown_s``; thread-safe."""

    def __init__(self, failures: int, cooldown_s: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.threshold = max(1, failures)
        self.cooldown_s = cooldown_s
        self.monotonic = monotonic
        self.consecutive = 0
        self.open_until = 0.0
        self.last_error = ""
        self._lock = threading.Lock()

    def remaining_s(self) -> float:
        """Seconds until the circuit lets a request through (0 when closed or cooled down)."""
        with self._lock:
            if self.consecutive < self.threshold:
                return 0.0
            return max(0.0, self.open_until - self.monotonic())

    def success(self) -> None:
        with self._lock:
            self.consecutive = 0
            self.open_until = 0.0

    def failure(self, error: str) -> None:
        with self._lock:
            self.consecutive += 1
            self.last_error = error
            if self.consecutive >= self.threshold:
                self.open_until = self.monotonic() + self.cooldown_s


class TokenBucket:
    """``per_min`` requests a minute, bursts of up to a tenth of that; ``per_min=0``: no limit."""

    def __init__(self, per_min: int, monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.rate_per_s = per_min / 60.0
        self.capacity = max(1.0, per_min / 10.0)
        self.tokens = self.capacity
        self.monotonic = monotonic
        self.sleep = sleep
        self.stamp = monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        if self.rate_per_s <= 0:
            return
        while True:
            with self._lock:
                now = self.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate_per_s)
                self.stamp = now
                if self.tokens >= 1.0:
                    self.tokens -= 1.0
                    return
                wait = (1.0 - self.tokens) / self.rate_per_s
            self.sleep(wait)


def _names_a_request_field(exc: openai.APIStatusError) -> bool:
    """A server error that is really a refusal of our request: retrying cannot help.

    llama-cpp-python's server (0.3.36) answers a ``response_format`` it does not support
    (``json_schema``) with HTTP 500 and the validation error as the message (measured).
    """
    return exc.status_code >= 500 and "validation error" in exc.message and "response_format" in exc.message


def retry_after_s(exc: BaseException) -> float | None:
    """The server's ``Retry-After`` (or ``retry-after-ms``) in seconds, if it sent one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


class Endpoint:
    """Chat completions and embeddings against one OpenAI-compatible base URL.

    Args:
        settings: the ``[model]`` section (URL, key, timeouts, retry and breaker numbers).
        sleep, monotonic, rng: injectable for tests (no real waiting, seeded jitter).
    """

    def __init__(self, settings: ModelSettings, *, sleep: Callable[[float], None] = time.sleep,
                 monotonic: Callable[[], float] = time.monotonic, rng: random.Random | None = None) -> None:
        if not settings.openai_base_url:
            raise InvalidInput("the openai model client needs [model] openai_base_url (DYNMEM_OPENAI_BASE_URL)")
        self.settings = settings
        self.base_url = settings.openai_base_url
        self.sleep = sleep
        self.rng = rng or random.Random()
        # An explicit key (a placeholder for keyless local servers such as Ollama) keeps the
        # package from reading OPENAI_API_KEY: the key comes from DYNMEM_OPENAI_API_KEY only.
        self._client = openai.OpenAI(base_url=settings.openai_base_url,
                                     api_key=settings.openai_api_key or "no-key",
                                     timeout=settings.timeout_s, max_retries=0)
        # The package builds its resources (and imports their modules) on first use: 50-100 ms of
        # CPU that would otherwise fall on the first request of every worker, when a replay's
        # first batch waits for all of them at once (issue 12). Built here, with the client.
        _ = self._client.chat.completions
        self.breaker = CircuitBreaker(settings.breaker_failures, settings.breaker_cooldown_s, monotonic)
        self.bucket = TokenBucket(settings.rate_limit_per_min, monotonic, sleep)
        self._slots = threading.BoundedSemaphore(settings.max_concurrency)
        self.requests_sent = 0

    # -- requests ----------------------------------------------------------------------
    def chat(self, model: str, messages: Sequence[Mapping[str, str]], response_format: Mapping[str, Any]) -> str:
        """The assistant's text for one chat completion (``temperature=0``)."""

        def send() -> str:
            # openai's overloads want its TypedDict message and format params; plain mappings are what it sends
            reply = self._client.chat.completions.create(  # type: ignore[call-overload]
                model=model, messages=list(messages), response_format=dict(response_format),
                temperature=0, max_tokens=self.settings.max_output_tokens)
            choices = getattr(reply, "choices", None)
            if not choices:
                raise ModelBadReply(f"the model endpoint {self.base_url} answered without choices")
            content = getattr(choices[0].message, "content", None)
            if not isinstance(content, str) or not content.strip():
                raise ModelBadReply(f"the model endpoint {self.base_url} answered with an empty message")
            return content

        return self._call(f"chat with {model}", send)

    def embeddings(self, model: str, texts: Sequence[str], dimensions: int | None) -> list[list[float]]:
        """One float vector per text, in input order."""

        def send() -> list[list[float]]:
            kw: dict[str, Any] = {"dimensions": dimensions} if dimensions else {}
            reply = self._client.embeddings.create(model=model, input=list(texts), encoding_format="float", **kw)
            data = getattr(reply, "data", None)
            if not isinstance(data, list) or len(data) != len(texts):
                raise ModelBadReply(f"the embedding endpoint returned {len(data or [])} vectors for {len(texts)} texts")
            rows = sorted(data, key=lambda d: d.index)
            return [list(map(float, d.embedding)) for d in rows]

        return self._call(f"embeddings with {model}", send)

    def list_models(self) -> list[str]:
        """Model ids the endpoint lists (``GET /models``)."""
        return self._call("list models", lambda: [m.id for m in self._client.models.list()])

    # -- the careful part ----------------------------------------------------------------
    def _open_error(self) -> ModelUnavailable:
        return ModelUnavailable(
            f"model endpoint {self.base_url} is unavailable (circuit open for "
            f"{self.breaker.remaining_s():.0f}s after {self.breaker.consecutive} consecutive failures; "
            f"last: {self.breaker.last_error})")

    def _call(self, what: str, send: Callable[[], T]) -> T:
        s = self.settings
        last: BaseException | None = None
        for attempt in range(s.max_retries + 1):
            if self.breaker.remaining_s() > 0:
                raise self._open_error()
            self.bucket.acquire()
            hint: float | None = None
            try:
                with self._slots:
                    self.requests_sent += 1
                    result = send()
                self.breaker.success()
                return result
            except openai.APITimeoutError as exc:
                last = exc
                self.breaker.failure(f"timed out after {s.timeout_s:g}s")
            except openai.APIConnectionError as exc:
                last = exc
                self.breaker.failure(f"connection failed: {exc.message}")
            except openai.APIStatusError as exc:
                if (exc.status_code not in _RETRY_STATUS and exc.status_code < 500) or _names_a_request_field(exc):
                    raise self._rejected(what, exc) from exc
                last = exc
                hint = retry_after_s(exc)
                self.breaker.failure(f"HTTP {exc.status_code}")
            except ModelBadReply:
                raise
            except (json.JSONDecodeError, pydantic.ValidationError, openai.APIResponseValidationError) as exc:
                raise ModelBadReply(f"{what}: the endpoint {self.base_url} sent a body that is not an "
                                    f"OpenAI response ({type(exc).__name__})") from exc
            except openai.OpenAIError as exc:
                raise ModelError(redact(f"{what}: {exc}")) from exc
            if attempt < s.max_retries:
                self.sleep(self._backoff(attempt, hint))
        raise self._final(what, last, s.max_retries + 1)

    def _backoff(self, attempt: int, hint: float | None) -> float:
        s = self.settings
        step: float = s.retry_base_s * (2 ** attempt)  # int ** int is Any in typeshed
        wait = step / 2 + self.rng.uniform(0, step / 2)
        if hint is not None:
            wait = max(wait, hint)
        return min(wait, s.retry_max_s)

    def _rejected(self, what: str, exc: openai.APIStatusError) -> EndpointRejected:
        code = exc.status_code
        if code in (401, 403):
            msg = (f"the model endpoint {self.base_url} refused the API key (HTTP {code}); "
                   f"set DYNMEM_OPENAI_API_KEY")
        elif code == 404:
            msg = f"{what}: not found at {self.base_url} (HTTP 404): check the model name and base URL"
        else:
            msg = f"{what}: the endpoint rejected the request (HTTP {code}): {exc.message}"
        return EndpointRejected(redact(msg), code)

    def _final(self, what: str, last: BaseException | None, attempts: int) -> ModelError:
        if isinstance(last, openai.APITimeoutError):
            return ModelTimeout(f"{what}: the model endpoint {self.base_url} did not answer within "
                                f"{self.settings.timeout_s:g}s ({attempts} attempts)")
        if isinstance(last, openai.APIStatusError):
            kind = "rate limited" if last.status_code == 429 else "failing"
            return ModelUnavailable(redact(f"{what}: the model endpoint {self.base_url} is {kind} "
                                           f"(HTTP {last.status_code} after {attempts} attempts)"))
        return ModelUnavailable(f"{what}: cannot reach the model endpoint {self.base_url} ({attempts} attempts)")
