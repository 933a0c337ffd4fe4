"""The one place litellm is imported, configured for this product.

Importing litellm fetches a model price list from the internet unless told not to, and takes seconds;
everything that calls a model or a remote embedder imports it through :func:`load_litellm`, lazily.
"""

from __future__ import annotations

import os
from typing import Any


def load_litellm() -> Any:
    """Litellm with the local price list, no debug banner, unsupported parameters dropped per provider, and no
    retries of its own (the product's are the only ones: :mod:`explorer.providers.retries`).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    # Its embedding routes read ``max_retries=0`` as unset and fall back to this (BerriAI/litellm#7003), which
    # they read at each call: typed Final, yet the one way to turn those retries off.
    litellm.DEFAULT_MAX_RETRIES = 0  # type: ignore[misc]
    return litellm
