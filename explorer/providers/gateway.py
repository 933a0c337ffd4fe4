"""The one door every model call goes through.

Why one gateway: retries, timeouts, cost accounting, the call log and the
offline fallback are the same for every prompt, so no algorithm has to know
which provider answered. Algorithms receive a gateway and call :meth:`ask`.

litellm is imported on the first real model call only: its import costs 3–4 s
and, unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is set first, fetches a price list
from the internet.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from explorer.prompts import Prompt
from explorer.providers.budget import Budget
from explorer.providers.client import load_litellm
from explorer.providers.deadline import CallCancelled, Interrupter
from explorer.providers.retries import backoff_s, describe, retryable, timed_out
from explorer.providers.structured import (
    Form,
    FormCache,
    StructuredForms,
    Ticket,
    names_the_form,
    response_format,
)
from explorer.records import Progress
from explorer.records.calls import FORM_REFUSED, CallRecord
from explorer.settings import Settings

T = TypeVar("T")
S = TypeVar("S")
R = TypeVar("R")
CHARS_PER_TOKEN = 3.0  # English averages ~4; fewer characters per token over-estimates, as a bound should
Tier = Literal["local", "cloud", "offline"]
OFFLINE_MODEL = "offline/extractive"
ITEMS_PER_SLOT = 8  # items :meth:`Gateway.map` keeps under way per call slot, so items that chain calls fill every slot


class OfflineAnswerer(Protocol):
    """What the gateway needs from the offline provider (see :mod:`explorer.offline`)."""

    def answer(self, prompt: Prompt[Any], fields: dict[str, Any]) -> str:
        """Text the prompt's parser accepts, derived from ``fields`` alone."""
        ...

    def prepare(self, requests: Sequence[tuple[Prompt[Any], dict[str, Any]]]) -> None:
        """Get ready to answer these requests one by one (what they will compare, embedded in one batch)."""
        ...


@dataclass
class Answer(Generic[T]):
    """A typed answer, or a failure that says why; never an exception for model trouble.

    Costs and tokens add up every attempt the call took.
    """

    value: T | None
    text: str
    model: str
    tier: Tier
    cost_cents: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the caller can use ``value``: the call succeeded and the answer parsed."""
        return self.error is None and self.value is not None

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens of every attempt."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def refused(self) -> bool:
        """Whether the budget refused the call (as opposed to the model failing it)."""
        return self.error is not None and self.error.startswith("budget exhausted")

    def after(self, attempt: _Attempt[T]) -> Answer[T]:
        """This answer updated by one more attempt: its outcome wins, its costs add up."""
        made = attempt.outcome != "budget"
        return replace(
            self,
            value=attempt.value,
            text=attempt.text or self.text,
            cost_cents=self.cost_cents + attempt.cost_cents,
            prompt_tokens=self.prompt_tokens + attempt.prompt_tokens,
            completion_tokens=self.completion_tokens + attempt.completion_tokens,
            attempts=self.attempts + made,
            error=attempt.error,
        )


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
        self.calls += answer.attempts
        self.failures += 0 if answer.ok else 1
        self.cost_cents += answer.cost_cents
        self.tokens += answer.tokens
        self.by_tier[answer.tier] = self.by_tier.get(answer.tier, 0) + 1

    def merge(self, other: Usage) -> None:
        """Add the totals of another unit of work (one item of a :meth:`Gateway.map`)."""
        self.calls += other.calls
        self.failures += other.failures
        self.cost_cents += other.cost_cents
        self.tokens += other.tokens
        for tier, count in other.by_tier.items():
            self.by_tier[tier] = self.by_tier.get(tier, 0) + count


class Gateway:
    """Answers prompts with the configured models, or offline when none is set.

    ``log`` receives one :class:`CallRecord` per attempt (the CLI and app write them to the store);
    ``completion_kwargs`` are passed to litellm as they are, which is how some tests pass ``mock_response``;
    ``sleep`` waits out the backoff between attempts (by default a wait a :meth:`cancel` cuts short);
    ``requests`` runs each request to its deadline (pass the embedder's, and :meth:`cancel` interrupts both);
    ``forms_cache`` is the file that keeps the response format each server took for later gateways
    (:class:`~explorer.providers.structured.FormCache`; ``None``: learnt again by each gateway).
    Safe to call from several threads at once (see :meth:`map`).
    """

    def __init__(
        self,
        settings: Settings,
        offline: OfflineAnswerer,
        *,
        log: Callable[[CallRecord], None] | None = None,
        completion_kwargs: dict[str, Any] | None = None,
        sleep: Callable[[float], None] | None = None,
        requests: Interrupter | None = None,
        run_failures: tuple[type[Exception], ...] = (),
        forms_cache: Path | None = None,
    ):
        self.settings = settings
        self.offline = offline
        self.log = log
        # what the offline provider lets through rather than answering with a failure: the trouble of the whole
        # run, not of one answer (its embedder reads a cache from the database, which may be away)
        self.run_failures = run_failures
        self.completion_kwargs = completion_kwargs or {}
        self._requests = requests or Interrupter()
        self._sleep = sleep or self._requests.pause
        self._listed_prices: dict[str, tuple[float, float] | None] = {}
        self._slots = threading.BoundedSemaphore(self.concurrency)
        cache = FormCache(forms_cache) if forms_cache is not None else None
        self._forms = StructuredForms(settings.structured, settings.api_base, cache)

    def cancel(self) -> None:
        """Cancel the run asking: every call in flight is abandoned (its connection closed) and raises
        :class:`CallCancelled`, as does every later :meth:`ask` until :meth:`resume`. For a worker whose job
        was cancelled: the run stops within a moment, not after a model's answer.
        """
        self._requests.cancel()

    def resume(self) -> None:
        """Answer again after a :meth:`cancel` (the next run in the same process)."""
        self._requests.resume()

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

    @property
    def concurrency(self) -> int:
        """How many model requests are in flight at most, across every thread that shares this gateway: the
        setting for models, one for the offline provider (it is CPU work in this process, so threads would not
        help it and would cost its reproducibility).
        """
        return 1 if self.offline_only else max(1, self.settings.concurrency)

    def map(self, work: Callable[[S], R], items: Sequence[S], progress: Progress | None = None) -> list[R]:
        """``work`` on every item, items under way together, results in the items' order.

        For independent items whose work waits on models (dreams, judgements, merges). What is bounded is
        the requests in flight (:attr:`concurrency` slots, taken by each attempt in :meth:`ask`), not the
        items: an item that chains calls (a dream asks three questions, one after the other) holds no slot
        while it computes between them, and more items than slots are under way so that the slots stay
        full. ``work`` must not touch the database, and should turn its own trouble into a result: an
        exception it lets out is raised here, after the other items are done. ``progress`` is told when the
        work starts (before the first item, which may take a while) and of each item as it finishes.
        """
        if progress:
            progress(0, len(items), "")
        if self.concurrency == 1 or len(items) <= 1:
            results = []
            for done, item in enumerate(items):
                results.append(work(item))
                if progress:
                    progress(done + 1, len(items), "")
            return results
        with ThreadPoolExecutor(max_workers=min(self.concurrency * ITEMS_PER_SLOT, len(items))) as pool:
            futures = [pool.submit(work, item) for item in items]
            if progress:
                for done, _ in enumerate(as_completed(futures)):
                    progress(done + 1, len(items), "")
            return [future.result() for future in futures]

    def ask_each(
        self,
        requests: Sequence[tuple[Prompt[Any], dict[str, Any]]],
        *,
        purpose: str | None = None,
        budget: Budget | None = None,
        progress: Progress | None = None,
    ) -> list[Answer[Any]]:
        """Independent (prompt, fields) requests asked through :meth:`map`, answers in their order (logged under
        ``purpose``, else each prompt's kind). Offline, the provider first prepares for all of them at once: one
        batch embeds what the answers will compare on every core, where the texts one answer at a time cost three
        to four times more.
        """
        if self.offline_only:
            if progress:  # the preparation is the answers' embedding: a while on a large batch
                progress(0, len(requests), "")
            self.offline.prepare(requests)
        return self.map(
            lambda request: self.ask(request[0], request[1], purpose=purpose or request[0].kind, budget=budget),
            requests,
            progress,
        )

    def token_prices(self, model: str) -> tuple[float, float] | None:
        """(input, output) dollars per token for ``model``, so a call can be budgeted before it is made.

        Prices from the settings (``prices``, for models litellm does not know) win, then prices passed with
        the call (``completion_kwargs``), then litellm's price list; ``None``: the model has no price, and
        its calls count as free.
        """
        if model in self.settings.prices:
            per_million = self.settings.prices[model]
            return per_million[0] / 1e6, per_million[1] / 1e6
        kwargs = self.completion_kwargs
        if "input_cost_per_token" in kwargs or "output_cost_per_token" in kwargs:
            return float(kwargs.get("input_cost_per_token", 0.0)), float(kwargs.get("output_cost_per_token", 0.0))
        if model == OFFLINE_MODEL:
            return None
        if model not in self._listed_prices:  # asked before every attempt; litellm may ask a local server
            try:
                info = load_litellm().get_model_info(model)
            except Exception:  # litellm raises a bare Exception for unknown models
                self._listed_prices[model] = None
            else:
                self._listed_prices[model] = (
                    float(info.get("input_cost_per_token") or 0.0),
                    float(info.get("output_cost_per_token") or 0.0),
                )
        return self._listed_prices[model]

    def worst_case_cents(self, prompt: Prompt[Any], fields: dict[str, Any], model: str) -> float:
        """The most one attempt at ``prompt`` on ``model`` can cost: the prompt, counted generously, and a
        full ``max_tokens`` answer. What a budget reserves before the attempt.
        """
        prices = self.token_prices(model)
        if prices is None:
            return 0.0
        return (_prompt_tokens(prompt, fields) * prices[0] + prompt.max_tokens * prices[1]) * 100

    def ask(
        self,
        prompt: Prompt[T],
        fields: dict[str, Any],
        *,
        tier: Tier = "local",
        purpose: str | None = None,
        session_id: str | None = None,
        budget: Budget | None = None,
    ) -> Answer[T]:
        """Ask ``prompt`` with ``fields`` on the tier's model (or offline) and return a typed answer.

        Model trouble comes back as ``Answer.error``, never as an exception; a cancelled run
        (:meth:`cancel`) raises :class:`CallCancelled`. Each attempt is reserved against ``budget`` before it
        is made, charged at most that reservation, and logged after. The timeout is each attempt's whole
        deadline (connect, first byte and whole body) and the product's retries are the only ones (the HTTP
        client's own are turned off), so a call takes at most ``timeout × (retries + 1)`` plus the backoff
        between attempts.
        """
        self._requests.check()
        model, used_tier = self.model_for(tier)
        call = _Call(prompt, fields, model, used_tier, purpose or prompt.kind, session_id, budget)
        if used_tier == "offline":
            return self._ask_offline(call)
        return self._ask_model(call)

    def _record(self, call: _Call, attempt: _Attempt, started: float) -> None:
        if self.log is None:
            return
        self.log(
            CallRecord(
                model=call.model,
                tier=call.tier,
                purpose=call.purpose,
                outcome=attempt.outcome,
                prompt_tokens=attempt.prompt_tokens,
                completion_tokens=attempt.completion_tokens,
                cost_cents=attempt.cost_cents,
                latency_ms=(time.perf_counter() - started) * 1000,
                error=attempt.error,
                session_id=call.session_id,
            )
        )

    def _cap(self, prompt: Prompt[Any]) -> int:
        """The answer's length cap in characters: the settings' for its kind, else the prompt's own."""
        return self.settings.answer_caps.get(prompt.kind) or prompt.answer_cap

    def _read(self, prompt: Prompt[Any], text: str, model: str) -> tuple[Any, str | None]:
        """The answer's value, or why it was refused (over its length cap, malformed, out of range)."""
        value, reason = prompt.read(text, cap=self._cap(prompt))
        return value, None if reason is None else f"{model}'s answer to {prompt.kind} was refused: {reason}"

    def _ask_offline(self, call: _Call[T]) -> Answer[T]:
        started = time.perf_counter()
        reason: str | None
        try:
            text = self.offline.answer(call.prompt, call.fields)
        except self.run_failures:
            raise
        except Exception as exc:  # the offline provider must never take a run down
            text, value, reason = "", None, f"offline provider failed: {exc}"
        else:
            value, reason = self._read(call.prompt, text, OFFLINE_MODEL)
        attempt: _Attempt[T] = _Attempt(outcome="ok" if value is not None else "parse_error", error=reason)
        self._record(call, attempt, started)
        return Answer(value, text, OFFLINE_MODEL, "offline", attempts=1, error=reason)

    def _ask_model(self, call: _Call[T]) -> Answer[T]:
        """Attempts until one answers, up to the retries, with backoff between them. A request refused for its
        response format is not one of the retries: it is asked again at once in the next weaker form
        (:mod:`explorer.providers.structured`), reserved, charged and logged like any attempt. While the model's
        form is unsettled, the call may first wait (up to its timeout) for another request's word on it.
        """
        answer: Answer[T] = Answer(None, "", call.model, call.tier, error="no attempt made")
        retries = 0
        ticket: Ticket | None = None
        try:
            while True:
                if ticket is None and call.prompt.json_answer:
                    ticket = self._forms.take(call.model, wait_s=self.settings.timeout_s)
                attempt = self._attempt(call, ticket.form if ticket else "off")
                if attempt.cancelled:
                    raise CallCancelled(attempt.error)
                answer = answer.after(attempt)
                if ticket is not None and attempt.outcome == FORM_REFUSED:
                    ticket = self._forms.refused(ticket, attempt.error or "", wait_s=self.settings.timeout_s)
                    continue
                if ticket is not None:
                    answered = attempt.outcome in ("ok", "parse_error")  # the server took the form
                    (self._forms.answered if answered else self._forms.release)(ticket)
                    ticket = None
                if attempt.outcome in ("ok", "budget") or not attempt.retryable or retries == self.settings.retries:
                    return answer
                retries += 1
                self._sleep(backoff_s(retries))
        finally:
            if ticket is not None:  # a cancel or a bug: the requests waiting on this one's word ask without it
                self._forms.release(ticket)

    def _attempt(self, call: _Call[T], form: Form) -> _Attempt[T]:
        """One request, in one of the :attr:`concurrency` slots: reserved, made, read, costed, settled and
        logged. The reservation is taken in the slot, so calls waiting for one hold none of the budget; the
        charge is at most the reservation, whatever usage the server reports, so no budget is ever exceeded.
        """
        worst = self.worst_case_cents(call.prompt, call.fields, call.model)
        with self._slots:
            self._requests.check()
            if call.budget is not None and not call.budget.reserve(worst):
                left = call.budget.remaining_cents
                return _Attempt(
                    outcome="budget",
                    error=f"budget exhausted: {left:.2f} ¢ left cannot cover a call that may cost {worst:.2f} ¢",
                    retryable=False,
                )
            started = time.perf_counter()
            attempt = self._request(call, form)
            attempt = replace(attempt, cost_cents=min(attempt.cost_cents, worst))
            if call.budget is not None:
                call.budget.settle(worst, attempt.cost_cents)
        self._record(call, attempt, started)
        return attempt

    def _request(self, call: _Call[T], form: Form) -> _Attempt[T]:
        """One completion, its JSON answer's schema asked for in ``form``."""
        litellm = load_litellm()
        structure = response_format(form, call.prompt)
        prices = self.token_prices(call.model)
        # Whether a failed or abandoned request is billed is the provider's business; count its prompt, as it may be.
        prompt_cents = _prompt_tokens(call.prompt, call.fields) * prices[0] * 100 if prices else 0.0
        try:
            request = litellm.acompletion(
                model=call.model,
                messages=call.prompt.messages(call.fields),
                temperature=call.prompt.temperature,
                max_tokens=call.prompt.max_tokens,
                timeout=self.settings.timeout_s,
                api_base=self.settings.api_base,
                max_retries=0,  # one retry layer: ours
                **({"response_format": structure} if structure else {}),
                **self.completion_kwargs,
            )
            response = self._requests.run(request, deadline_s=self.settings.timeout_s)
        except CallCancelled:
            return _Attempt(
                outcome="error",
                error=f"{call.model}'s call was abandoned: the run was cancelled",
                cost_cents=prompt_cents,
                cancelled=True,
            )
        except Exception as exc:
            if structure is not None and names_the_form(exc):
                outcome = FORM_REFUSED
            else:
                outcome = "timeout" if timed_out(exc) else "error"
            return _Attempt(
                outcome=outcome,
                error=describe(exc, call.model, self.settings.timeout_s),
                cost_cents=prompt_cents,
                retryable=retryable(exc),
            )
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = (prompt_tokens * prices[0] + completion_tokens * prices[1]) * 100 if prices else 0.0
        text = response.choices[0].message.content or ""
        value, reason = self._read(call.prompt, text, call.model)
        # An answer over its cap is a model ignoring max_tokens: asked again, it would most likely do it again.
        oversize = len(text) > self._cap(call.prompt)
        return _Attempt(
            outcome="ok" if value is not None else "parse_error",
            value=value,
            text=text,
            error=f"{reason} (not asked again: the model ignored max_tokens)" if oversize else reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_cents=cost,
            retryable=not oversize,
        )


@dataclass(frozen=True)
class _Call(Generic[T]):
    prompt: Prompt[T]
    fields: dict[str, Any]
    model: str
    tier: Tier
    purpose: str
    session_id: str | None
    budget: Budget | None


@dataclass(frozen=True)
class _Attempt(Generic[T]):
    outcome: str  # ok, parse_error, timeout, error, form_refused, budget: the call log's vocabulary
    value: T | None = None
    text: str = ""
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_cents: float = 0.0
    retryable: bool = True
    cancelled: bool = False  # abandoned because the run was cancelled: logged and settled, then raised


def _prompt_tokens(prompt: Prompt[Any], fields: dict[str, Any]) -> int:
    """A generous count of the prompt's tokens (fewer characters per token than English averages)."""
    return int(sum(len(m["content"]) for m in prompt.messages(fields)) / CHARS_PER_TOKEN) + 16
