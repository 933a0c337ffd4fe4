"""Settings: which models answer, whether each provider's key is set (never its value), budgets, the database."""

from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from explorer import projection
from explorer.views import model_calls, store_counts
from pages import common, untrusted

# provider prefix of a litellm model name → the variable litellm reads its key from
PROVIDER_KEYS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "cohere": "COHERE_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "azure": "AZURE_API_KEY",
    "xai": "XAI_API_KEY",
}


def provider_of(model: str | None) -> str | None:
    if not model:
        return None
    if "/" in model:
        return model.split("/", 1)[0]
    return (
        "openai"
        if model.startswith(("gpt-", "o1", "o3", "o4", "text-embedding"))
        else ("anthropic" if model.startswith("claude") else None)
    )


rt = common.runtime()
settings = rt.settings
st.title("Settings")
st.caption("Set with environment variables (`EXPLORER_*`) or `explorer.toml`; restart the app to change them.")

if settings.offline:
    st.info(common.OFFLINE_NOTICE + ", as the table below shows.", icon=":material/info:")

st.subheader("Models")
st.dataframe(
    pd.DataFrame(
        [
            {
                "role": "local (routine calls)",
                "model": settings.local_model or "— (offline provider)",
                "variable": "EXPLORER_LOCAL_MODEL",
            },
            {
                "role": "cloud (high-value calls)",
                "model": settings.cloud_model or "— (offline provider)",
                "variable": "EXPLORER_CLOUD_MODEL",
            },
            {"role": "embeddings", "model": settings.embedding_model, "variable": "EXPLORER_EMBEDDING_MODEL"},
            {"role": "API base (local server)", "model": settings.api_base or "—", "variable": "EXPLORER_API_BASE"},
        ]
    ),
    hide_index=True,
)
st.caption(f"Timeout {settings.timeout_s:.0f} s, {settings.retries} retries · offline provider seed {settings.seed}")

st.subheader("Provider keys")
needed = {provider_of(settings.local_model), provider_of(settings.cloud_model), provider_of(settings.embedding_model)}
st.dataframe(
    pd.DataFrame(
        [
            {
                "provider": provider,
                "variable": variable,
                "set": "yes" if os.environ.get(variable) else "no",
                "needed by the configured models": "yes" if provider in needed else "",
            }
            for provider, variable in PROVIDER_KEYS.items()
        ]
    ),
    hide_index=True,
)
st.caption("Only whether each variable is set is shown; keys are read by litellm and never stored or displayed.")

st.subheader("Budgets")
st.markdown(
    f"Default cloud budget of a new session: **{settings.cloud_budget_cents} cents** "
    "(`EXPLORER_BUDGET_CENTS`); each session can set its own."
)
calls = model_calls(rt)
stats = store_counts(rt)
if calls:
    st.dataframe(pd.DataFrame(calls, columns=["tier", "model", "outcome", "calls", "cost (¢)"]), hide_index=True)
else:
    st.caption("No model call logged yet.")

st.subheader("Database")
st.markdown(
    f"{untrusted.md(rt.db.location)} (`EXPLORER_DB`) · waits up to {settings.lock_wait_s:.0f} s for another process "
    "(`EXPLORER_LOCK_WAIT`)"
)
columns = st.columns(4)
for column, key in zip(columns, ("documents", "nodes", "sessions", "crystals"), strict=True):
    column.metric(key.capitalize(), stats[key])
status = projection.projection_status(rt)
st.caption(
    f"Map: version {status.version}, {status.fitted_nodes} nodes fitted, {status.placed_nodes} nodes and "
    f"{status.placed_other} loci/crystals/resonances placed since"
    + (" (a refit is advisable: Map page)" if status.stale else "")
)
