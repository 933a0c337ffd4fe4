"""The one place litellm is imported, configured for this product.

Importing litellm fetches a model price list from the internet unless told not to, and takes seconds;
everything that calls a model or a remote embedder imports it through :func:`load_litellm`, lazily.
"""

from __future__ import annotations

import os
from typing import Any


def load_litellm() -> Any:
    """Litellm with the local price list, no debug banner, and unsupported parameters dropped per provider."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm
