"""How a model is asked for a JSON answer of a given shape: the ``response_format`` each provider understands.

Servers take a JSON schema in different forms, strongest first (:data:`LADDER`):

- ``json_schema``: OpenAI's ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``. OpenAI,
  vLLM, LM Studio, llama.cpp's ``llama-server`` (since ggml-org/llama.cpp#9527); litellm turns it into Ollama's
  ``format`` and into a tool call for Anthropic.
- ``json_object_schema``: ``{"type": "json_object", "schema": ...}``, what llama-cpp-python's server and older
  llama.cpp servers read: they answer HTTP 500 to the first ("... must be one of 'text' or 'json_object'").
- ``json_object``: JSON mode alone, no schema (an OpenAI model without structured outputs, say).
- ``off``: nothing sent; the prompt's own words and the reader are all there is.

``EXPLORER_STRUCTURED=auto`` (the default) chooses per model (:func:`first_form`). The provider prefix decides
first, since litellm's capability data knows no local server: ``ollama/``, ``ollama_chat/``, ``hosted_vllm/``,
``lm_studio/`` take ``json_schema``, ``llamafile/`` (llama.cpp inside) ``json_object_schema``, and so does the
generic OpenAI-compatible route (``openai/`` with an ``api_base``) take ``json_schema``: most servers behind it read
it, and one that refuses it costs one request a run, where the weaker default would leave vLLM's and LM Studio's
answers unconstrained without a word. Otherwise litellm says: ``supports_response_schema``, else ``json_object``
when ``response_format`` is among the model's parameters, else ``off``. The setting's other values force where
to begin: ``json_schema``, ``json_object`` (meaning ``json_object_schema``: a server that ignores the schema still
answers JSON) or ``off``.

A form the server refuses steps down (:meth:`StructuredForms.refused`): a failed request whose error message names
the response format (:func:`names_the_form`) is asked again at once in the next weaker form, and the model keeps
that form, with one line logged. The message decides, not the status alone: llama.cpp refuses the form with a 500,
which an overloaded server also answers, and a 400 may be a prompt over the context; a weaker form would mend
neither.

While a model's form is unsettled, one request asks (the probe) and the others wait for its verdict, each no
longer than its call's timeout, so requests in flight together cost one refusal, not one each. The form a server
answered in is kept in a :class:`FormCache` file (beside the database: :func:`forms_file`), by server and model,
so the next command starts there; an entry is relearnt after :data:`KEPT_S`, in case the server was upgraded.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_dir

from explorer.prompts import Prompt
from explorer.providers.client import load_litellm
from explorer.settings import is_server_url

Form = Literal["json_schema", "json_object_schema", "json_object", "off"]
LADDER: tuple[Form, ...] = ("json_schema", "json_object_schema", "json_object", "off")
FORCED: dict[str, Form] = {"json_schema": "json_schema", "json_object": "json_object_schema", "off": "off"}

# Local servers litellm has no capability data for, by the provider prefix it routes them with.
SCHEMA_PROVIDERS = frozenset({"ollama", "ollama_chat", "hosted_vllm", "lm_studio"})
LLAMA_CPP_PROVIDERS = frozenset({"llamafile"})
# What a refusal of the response format says: llama.cpp's "response_format type must be one of "text" or
# "json_object"", llama-cpp-python's "Input should be 'text' or 'json_object'", OpenAI's "Invalid schema for
# response_format", a server's grammar that failed to build.
_FORM_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")
KEPT_S = 7 * 24 * 3600.0  # how long a learnt form is trusted before the server is asked in its first form again

log = logging.getLogger(__name__)


def first_form(model: str, api_base: str | None) -> Form:
    """The strongest form ``model`` is expected to take, from its provider (see the module's docstring)."""
    litellm = load_litellm()
    try:
        provider = litellm.get_llm_provider(model=model, api_base=api_base)[1]
    except Exception:  # litellm raises a bare BadRequestError for a model it cannot route: it will say so itself
        return "off"
    if provider in SCHEMA_PROVIDERS or (provider == "openai" and api_base):
        return "json_schema"
    if provider in LLAMA_CPP_PROVIDERS:
        return "json_object_schema"
    if litellm.supports_response_schema(model=model, custom_llm_provider=provider):
        return "json_schema"
    supported = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or []
    return "json_object" if "response_format" in supported else "off"


def response_format(form: Form, prompt: Prompt[Any]) -> dict[str, Any] | None:
    """The ``response_format`` that asks for the prompt's answer schema in ``form``, named by the prompt's kind;
    ``None`` for ``off`` and for a free-text prompt. The schema is copied: litellm may rewrite it for a provider,
    and it is the prompt's.
    """
    name, schema = prompt.kind, prompt.schema
    if schema is None or form == "off":
        return None
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": copy.deepcopy(schema), "strict": True}}
    if form == "json_object_schema":
        return {"type": "json_object", "schema": copy.deepcopy(schema)}
    return {"type": "json_object"}


def names_the_form(error: Exception) -> bool:
    """Whether a failed request was refused for its response format: an HTTP error whose message names it."""
    status = getattr(error, "status_code", None)
    message = str(error).lower()
    return isinstance(status, int) and status >= 400 and any(word in message for word in _FORM_WORDS)


def forms_file(db_path: Path | str) -> Path:
    """Where the forms learnt for a database's runs are kept: beside a database file (``<file>.forms.json``), in
    the user's cache folder for a PostgreSQL server's.
    """
    if is_server_url(db_path):
        return Path(user_cache_dir("dream-explorer")) / "structured-forms.json"
    path = Path(db_path)
    return path.with_name(f"{path.name}.forms.json")


class FormCache:
    """The form each server took, by ``api_base`` and model, in a small JSON file shared by every process.

    A cache, never a source of failure: a file that is missing, unreadable or not what was written reads as
    empty (and is written over), and a write that fails is logged and forgotten. Writes replace the file whole
    (a temporary file renamed), so a reader never sees half of one; two processes writing at once may lose one's
    entry, which is then learnt again.
    """

    def __init__(self, path: Path, clock: Any = time.time):
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()

    def get(self, api_base: str | None, model: str) -> Form | None:
        """The form ``model`` at ``api_base`` last took, unless unknown or older than :data:`KEPT_S`."""
        entry = self._read().get(api_base or "", {}).get(model)
        if not isinstance(entry, dict) or entry.get("form") not in LADDER:
            return None
        learnt = entry.get("learnt")
        if not isinstance(learnt, int | float) or not 0 <= self._clock() - learnt <= KEPT_S:
            return None
        form: Form = entry["form"]
        return form

    def put(self, api_base: str | None, model: str, form: Form) -> None:
        """Keep that ``model`` at ``api_base`` takes ``form``, learnt now."""
        with self._lock:
            servers = self._read()
            models = servers.setdefault(api_base or "", {})
            if not isinstance(models, dict):
                models = servers[api_base or ""] = {}
            models[model] = {"form": form, "learnt": self._clock()}
            try:
                self._write({"servers": servers})
            except OSError as exc:
                log.info("could not keep the structured answer forms learnt in %s: %s", self.path, exc)

    def _write(self, kept: dict[str, Any]) -> None:
        """``kept`` as the whole file, at once: written beside it, then renamed over it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(kept, file, indent=1, sort_keys=True)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def _read(self) -> dict[str, Any]:
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # missing, unreadable, not JSON, not UTF-8: as if empty
            return {}
        servers = kept.get("servers") if isinstance(kept, dict) else None
        return {k: v for k, v in servers.items() if isinstance(v, dict)} if isinstance(servers, dict) else {}


@dataclass(frozen=True)
class Ticket:
    """The form one request is to ask in, and whether it is the probe the model's other requests wait for."""

    model: str
    form: Form
    probe: bool = False


@dataclass
class _Known:
    form: Form
    settled: bool  # a server answered in this form (in this process or, kept in the cache, in another)
    probing: bool = False  # a request asks in it now, and the model's other requests wait for its verdict


class StructuredForms:
    """The form each model is asked in, for one gateway: chosen on its first JSON prompt (or read from the
    cache), stepped down when refused, kept for the gateway's life and, with a ``cache``, for later ones. Safe to
    share between threads: while a model's form is unsettled its requests take turns (see :meth:`take`).
    """

    def __init__(self, setting: str, api_base: str | None, cache: FormCache | None = None):
        self.setting = setting
        self.api_base = api_base
        self.cache = cache
        self._known: dict[str, _Known] = {}
        self._changed = threading.Condition()

    def form(self, model: str) -> Form:
        """The form ``model`` is asked in now (settled or not)."""
        return self._entry(model).form

    def take(self, model: str, wait_s: float) -> Ticket:
        """The form for one request to ``model``. Settled: at once. Unsettled: the first request is the probe,
        and the others wait for its verdict (:meth:`answered`, :meth:`refused`, :meth:`release`), at most
        ``wait_s`` seconds, after which they ask in the form as it stands.
        """
        known = self._entry(model)
        deadline = time.monotonic() + wait_s
        with self._changed:
            while not known.settled:
                if not known.probing:
                    known.probing = True
                    return Ticket(model, known.form, probe=True)
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return Ticket(model, known.form)

    def answered(self, ticket: Ticket) -> None:
        """The server answered in ``ticket``'s form: the model's form is settled, and kept in the cache."""
        known = self._entry(ticket.model)
        with self._changed:
            keep = known.form == ticket.form and not known.settled
            if keep:
                known.settled = True
            if ticket.probe:
                known.probing = False
            self._changed.notify_all()
        if keep and self.cache is not None and self.cache.get(self.api_base, ticket.model) != ticket.form:
            self.cache.put(self.api_base, ticket.model, ticket.form)

    def release(self, ticket: Ticket) -> None:
        """The request ended with no word on its form (a timeout, another failure, a cancel, no budget): a probe
        hands its turn to one of the requests waiting.
        """
        if not ticket.probe:
            return
        known = self._entry(ticket.model)
        with self._changed:
            known.probing = False
            self._changed.notify_all()

    def refused(self, ticket: Ticket, error: str, wait_s: float) -> Ticket:
        """The server refused ``ticket``'s form (any but ``off``; ``error`` says how): the model is asked in the
        next weaker one from now on, and the ticket to ask again with. A probe stays the probe, so the requests
        waiting go on waiting for the weaker form's verdict; another request takes its turn like a new one. A
        refusal of a form already stepped past (another request's, sent before) changes nothing.
        """
        known = self._entry(ticket.model)
        weaker = LADDER[LADDER.index(ticket.form) + 1]
        after: Ticket | None = None
        with self._changed:
            stepped = LADDER.index(known.form) <= LADDER.index(ticket.form)
            if stepped:
                known.form, known.settled = weaker, weaker == "off"
            if ticket.probe:
                known.probing = not known.settled
                self._changed.notify_all()
                after = Ticket(ticket.model, known.form, probe=known.probing)
        if stepped:
            model, form = ticket.model, ticket.form
            log.warning("%s refused structured answers as %s, asked as %s from now on: %s", model, form, weaker, error)
        return after or self.take(ticket.model, wait_s)

    def _entry(self, model: str) -> _Known:
        """What is known of ``model``'s form, first chosen (the cache's form, if weaker than where the setting or
        the provider begins) on its first request.
        """
        with self._changed:
            known = self._known.get(model)
        if known is not None:
            return known
        start = FORCED.get(self.setting) or first_form(model, self.api_base)  # litellm's first import: seconds
        kept = self.cache.get(self.api_base, model) if self.cache is not None else None
        if kept is not None and LADDER.index(kept) >= LADDER.index(start):
            chosen = _Known(kept, settled=True)
        else:
            chosen = _Known(start, settled=start == "off")
        with self._changed:
            return self._known.setdefault(model, chosen)
