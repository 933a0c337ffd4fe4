"""The one door every model call goes through.

Why one gateway: retries, timeouts, cost accounting, the call log and the
offline fallback are the same for every prompt, so no algorithm has to know
which provider answered. Algorithms receive a gateway and call :meth:`ask`.

litellm is imported on the first real model call only: its import costs 3–4 s
and, unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is set first, fetches a price list
from the internet.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from explorer.prompts import Prompt
from explorer.providers.client import load_litellm
from explorer.records.calls import CallRecord
from explorer.settings import Settings

T = TypeVar("T")
Tier = Literal["local", "cloud", "offline"]
OFFLINE_MODEL = "offline/extractive"


class OfflineAnswerer(Protocol):
    """What the gateway needs from the offline provider (see :mod:`explorer.offline`)."""

    def answer(self, prompt: Prompt[Any], fields: dict[str, Any]) -> str:
        """Text the prompt's parser accepts, derived from ``fields`` alone."""
        ...


@dataclass
class Answer(Generic[T]):
    """A typed answer, or a failure that says why; never an exception for model trouble."""

    value: T | None
    text: str
    model: str
    tier: Tier
    cost_cents: float = 0.0
    tokens: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the caller can use ``value``: the call succeeded and the answer parsed."""
        return self.error is None and self.value is not None


@dataclass
class Usage:
    """Running totals for one unit of work (a wander step, a dream cycle)."""

    calls: int = 0
    failures: int = 0
    cost_cents: float = 0.0
    tokens: int = 0
    by_tier: dict[str, int] = field(default_factory=dict)

    def add(self, answer: Answer[Any]) -> None:
        """Count one answer, failed or not, into the totals a budget and a report read."""
        self.calls += 1
        self.failures += 0 if answer.ok else 1
        self.cost_cents += answer.cost_cents
        self.tokens += answer.tokens
        self.by_tier[answer.tier] = self.by_tier.get(answer.tier, 0) + 1


class Gateway:
    """Answers prompts with the configured models, or offline when none is set.

    ``log`` receives one :class:`CallRecord` per call (the CLI and app write them
    to the store); ``completion_kwargs`` are passed to litellm as they are, which
    is how tests pass ``mock_response``.
    """

    def __init__(
        self,
        settings: Settings,
        offline: OfflineAnswerer,
        *,
        log: Callable[[CallRecord], None] | None = None,
        completion_kwargs: dict[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.settings = settings
        self.offline = offline
        self.log = log
        self.completion_kwargs = completion_kwargs or {}
        self._sleep = sleep

    def model_for(self, tier: Tier) -> tuple[str, Tier]:
        """The model a tier resolves to: the tier's own, else the other configured one, else offline."""
        local, cloud = self.settings.local_model, self.settings.cloud_model
        if tier == "cloud" and cloud:
            return cloud, "cloud"
        if tier in ("local", "cloud") and local:
            return local, "local"
        if tier == "local" and cloud:
            return cloud, "cloud"
        return OFFLINE_MODEL, "offline"

    @property
    def offline_only(self) -> bool:
        """True when no model is configured, so every prompt is answered by the offline provider."""
        return self.settings.offline

    def token_prices(self, model: str) -> tuple[float, float] | None:
        """(input, output) dollars per token for ``model``, so callers can budget a call before making it.

        Prices passed with the call (``completion_kwargs``) win over litellm's price list; ``None`` means the model
        cannot be priced (and the gateway then charges nothing for it either).
        """
        kwargs = self.completion_kwargs
        if "input_cost_per_token" in kwargs or "output_cost_per_token" in kwargs:
            return float(kwargs.get("input_cost_per_token", 0.0)), float(kwargs.get("output_cost_per_token", 0.0))
        try:
            info = load_litellm().get_model_info(model)
        except Exception:  # litellm raises a bare Exception for unknown models
            return None
        return float(info.get("input_cost_per_token") or 0.0), float(info.get("output_cost_per_token") or 0.0)

    def ask(
        self,
        prompt: Prompt[T],
        fields: dict[str, Any],
        *,
        tier: Tier = "local",
        purpose: str | None = None,
        session_id: str | None = None,
    ) -> Answer[T]:
        """Ask ``prompt`` with ``fields`` on the tier's model (or offline), log the call, and return a typed
        answer; model trouble comes back as ``Answer.error``, never as an exception.
        """
        model, used_tier = self.model_for(tier)
        started = time.perf_counter()
        if used_tier == "offline":
            answer = self._ask_offline(prompt, fields)
        else:
            answer = self._ask_model(prompt, fields, model, used_tier)
        if self.log is not None:
            self.log(
                CallRecord(
                    model=answer.model,
                    tier=answer.tier,
                    purpose=purpose or prompt.kind,
                    outcome="ok"
                    if answer.ok
                    else (
                        "timeout"
                        if answer.error and "timed out" in answer.error
                        else "parse_error"
                        if answer.text
                        else "error"
                    ),
                    prompt_tokens=0,
                    completion_tokens=answer.tokens,
                    cost_cents=answer.cost_cents,
                    latency_ms=(time.perf_counter() - started) * 1000,
                    error=answer.error,
                    session_id=session_id,
                )
            )
        return answer

    def _ask_offline(self, prompt: Prompt[T], fields: dict[str, Any]) -> Answer[T]:
        try:
            text = self.offline.answer(prompt, fields)
        except Exception as exc:  # the offline provider must never take a run down
            return Answer(None, "", OFFLINE_MODEL, "offline", error=f"offline provider failed: {exc}")
        value = prompt.parse(text)
        error = None if value is not None else f"offline answer to {prompt.kind} did not parse"
        return Answer(value, text, OFFLINE_MODEL, "offline", error=error)

    def _ask_model(self, prompt: Prompt[T], fields: dict[str, Any], model: str, tier: Tier) -> Answer[T]:
        litellm = load_litellm()
        messages = prompt.messages(fields)
        attempts = self.settings.retries + 1
        cost = 0.0
        tokens = 0
        text = ""
        error = "no attempt made"
        for attempt in range(attempts):
            if attempt:
                self._sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
            try:
                response = litellm.completion(
                    model=model,
                    messages=messages,
                    temperature=prompt.temperature,
                    max_tokens=prompt.max_tokens,
                    timeout=self.settings.timeout_s,
                    api_base=self.settings.api_base,
                    **({"response_format": {"type": "json_object"}} if prompt.json_answer and tier == "cloud" else {}),
                    **self.completion_kwargs,
                )
            except Exception as exc:
                error = _describe(exc, model, self.settings.timeout_s)
                if not _retryable(exc):
                    break
                continue
            cost += _cost_cents(litellm, response)
            tokens += getattr(getattr(response, "usage", None), "total_tokens", 0) or 0
            text = response.choices[0].message.content or ""
            value = prompt.parse(text)
            if value is not None:
                return Answer(value, text, model, tier, cost_cents=cost, tokens=tokens)
            error = f"{model} gave an answer to {prompt.kind} that does not parse"
        return Answer(None, text, model, tier, cost_cents=cost, tokens=tokens, error=error)


def _cost_cents(litellm: Any, response: Any) -> float:
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0) * 100
    except Exception:  # models litellm has no price for (local servers) cost nothing
        return 0.0


def _retryable(exc: Exception) -> bool:
    name = type(exc).__name__
    return not any(
        word in name for word in ("Authentication", "NotFound", "BadRequest", "PermissionDenied", "ContextWindow")
    )


def _describe(exc: Exception, model: str, timeout_s: float) -> str:
    if "Timeout" in type(exc).__name__:
        return f"{model} timed out after {timeout_s:.0f} s"
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{model} failed: {first_line[:300]}"
