"""The default embedder loads with no network, the hashing embedder is near for shared words and the
same in every process, and the cache spares recomputation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from explorer.providers.embeddings import CachedEmbedder, HashingEmbedder, LocalEmbedder, make_embedder, text_hash
from explorer.settings import load_settings

TEXTS = [
    "garbage collection of reference cycles",
    "the garbage collector frees reference cycles",
    "a treaty on maritime trade",
    "...",
    "",
]


@pytest.mark.minilm
def test_default_model_loads_and_embeds_with_no_network() -> None:
    # A fresh process with every proxy pointing nowhere: any network use would fail.
    code = (
        "from explorer.providers.embeddings import LocalEmbedder\n"
        "v = LocalEmbedder().embed(['a cat sat on the mat', 'a kitten rested on the rug', 'tax law'])\n"
        "import numpy as np\n"
        "print(v.shape, round(float(np.linalg.norm(v[0])), 3), bool(v[0] @ v[1] > v[0] @ v[2]))"
    )
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        NO_PROXY="",
        OMP_NUM_THREADS="1",
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


def test_hashing_is_near_for_shared_words_and_orthogonal_otherwise() -> None:
    vectors = HashingEmbedder().embed(TEXTS)
    assert vectors.shape == (5, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)  # even with no words
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.3 > similarity[0, 2]
    assert abs(similarity[0, 2]) < 0.1 and abs(similarity[1, 2]) < 0.1
    # word order matters through the pairs of neighbouring words, case does not
    flipped = HashingEmbedder().embed(["cycles reference of collection garbage", TEXTS[0].upper()])
    assert similarity[0, 0] > float(flipped[0] @ vectors[0]) > 0.3
    assert float(flipped[1] @ vectors[0]) == pytest.approx(1.0)
    assert not np.allclose(vectors[3], vectors[4])  # wordless texts differ by their whole text
    assert HashingEmbedder(dim=16).embed(["x"]).shape == (1, 16)


def test_hashing_gives_the_same_vectors_in_another_process_without_torch() -> None:
    # str hashes are salted per process: a fresh interpreter with another salt must agree exactly;
    # and the CLI with the hashing model never pays for importing torch.
    code = (
        "import json, sys\n"
        "import explorer.cli\n"
        "from explorer.providers.embeddings import make_embedder\n"
        "vectors = make_embedder('hashing').embed(json.loads(sys.argv[1]))\n"
        "assert 'torch' not in sys.modules and 'sentence_transformers' not in sys.modules\n"
        "print(json.dumps(vectors.tolist()))"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(TEXTS)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    np.testing.assert_array_equal(np.asarray(json.loads(out.stdout), dtype=np.float32), HashingEmbedder().embed(TEXTS))


def test_the_model_name_selects_the_embedder(tmp_path) -> None:
    settings = load_settings({"EXPLORER_EMBEDDING_MODEL": "hashing"}, tmp_path / "absent.toml")
    hashing = make_embedder(settings.embedding_model)
    assert isinstance(hashing, HashingEmbedder) and hashing.name == "hashing"
    assert isinstance(make_embedder("local:all-MiniLM-L6-v2"), LocalEmbedder)
