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
that form for the rest of the gateway's life (the run), with one line logged. The message decides, not the status
alone: llama.cpp refuses the form with a 500, which an overloaded server also answers, and a 400 may be a prompt
over the context; a weaker form would mend neither.
"""

from __future__ import annotations

import copy
import logging
import threading
from typing import Any, Literal

from explorer.prompts import Prompt
from explorer.providers.client import load_litellm

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


class StructuredForms:
    """The form each model is asked in, for one gateway: chosen on its first JSON prompt, stepped down when
    refused, kept for the gateway's life. Safe to share between threads.
    """

    def __init__(self, setting: str, api_base: str | None):
        self.setting = setting
        self.api_base = api_base
        self._forms: dict[str, Form] = {}
        self._lock = threading.Lock()

    def form(self, model: str) -> Form:
        """The form to ask ``model`` in now."""
        with self._lock:
            known = self._forms.get(model)
        if known is not None:
            return known
        chosen = FORCED.get(self.setting) or first_form(model, self.api_base)  # litellm's first import: seconds
        with self._lock:
            return self._forms.setdefault(model, chosen)

    def refused(self, model: str, form: Form, error: str) -> None:
        """``model`` refused ``form`` (any but ``off``; ``error`` says how): from now on it is asked in the next
        weaker one. A refusal of a form already stepped past (another thread's request, sent before) changes
        nothing.
        """
        weaker = LADDER[LADDER.index(form) + 1]
        with self._lock:
            if LADDER.index(self._forms.get(model, form)) > LADDER.index(form):
                return
            self._forms[model] = weaker
        log.warning("%s refused structured answers as %s, asked as %s from now on: %s", model, form, weaker, error)
