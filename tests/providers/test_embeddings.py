"""The default embedder loads with no network, and the cache spares recomputation."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from explorer.providers.embeddings import CachedEmbedder, text_hash


def test_default_model_loads_and_embeds_with_no_network() -> None:
    # A fresh process with every proxy pointing nowhere: any network use would fail.
    code = (
        "from explorer.providers.embeddings import LocalEmbedder\n"
        "v = LocalEmbedder().embed(['a cat sat on the mat', 'a kitten rested on the rug', 'tax law'])\n"
        "import numpy as np\n"
        "print(v.shape, round(float(np.linalg.norm(v[0])), 3), bool(v[0] @ v[1] > v[0] @ v[2]))"
    )
    env = dict(
        os.environ, HF_HUB_OFFLINE="1", HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY=""
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "(3, 384) 1.0 True"


def test_cache_serves_repeated_texts(embedder, runtime) -> None:
    calls: list[list[str]] = []

    class Counting:
        name, dim = embedder.name, embedder.dim

        def embed(self, texts):
            calls.append(list(texts))
            return embedder.embed(texts)

    stored: dict[str, np.ndarray] = {}
    lookups: list[list[str]] = []

    def load(hashes):
        lookups.append(list(hashes))
        return {h: stored[h] for h in hashes if h in stored}

    cached = CachedEmbedder(Counting(), load, stored.update, lambda: set(stored))
    first = cached.embed(["alpha", "beta", "alpha"])
    second = cached.embed(["beta", "gamma"])
    assert calls == [["alpha", "beta"], ["gamma"]]
    assert lookups == []  # nothing was stored before: no lookup worth making
    np.testing.assert_allclose(first[1], second[0])
    assert set(stored) == {text_hash(t) for t in ("alpha", "beta", "gamma")}
    # a second process (new CachedEmbedder) finds them in the database
    runtime.embedder.embed(["persisted text"])
    runtime.flush()
    fresh = CachedEmbedder(Counting(), runtime.embedder._load, runtime.embedder._save, runtime.embedder._stored_hashes)
    calls.clear()
    fresh.embed(["persisted text"])
    assert calls == []
