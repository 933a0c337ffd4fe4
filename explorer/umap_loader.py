"""UMAP, loaded so that its compiled code outlives the process.

umap-learn does not ask numba to cache what it compiles, so each new process recompiles (14-30 s before the
first fit). Every part of the product that reduces with UMAP (the map's projection, density clusters) loads it
through :func:`import_umap`.
"""

from __future__ import annotations

import functools
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir


def _numba_cache_dir() -> str:
    return os.environ.get("NUMBA_CACHE_DIR") or str(Path(user_cache_dir("dream-explorer")) / "numba")


_umap_lock = threading.Lock()


def import_umap() -> Any:
    """``umap``, its functions compiled through numba's on-disk cache: asking for the cache while umap's modules
    are first imported makes later processes load the compiled code instead of compiling it again.
    """
    with _umap_lock:
        import sys

        if "umap" in sys.modules:
            return sys.modules["umap"]
        cache_dir = _numba_cache_dir()
        os.environ["NUMBA_CACHE_DIR"] = cache_dir
        import numba

        # numba reads the variable at its import, which may have happened already. Its config module sets its
        # attributes at run time from the environment (globals()), so a type checker cannot see them: Any.
        numba_config: Any = numba.config
        numba_config.CACHE_DIR = cache_dir
        original = numba.njit, numba.jit

        def cached(decorator: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(decorator)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                kwargs.setdefault("cache", True)
                return decorator(*args, **kwargs)

            return wrapper

        numba.njit, numba.jit = cached(original[0]), cached(original[1])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import umap
        finally:
            numba.njit, numba.jit = original
        return umap
