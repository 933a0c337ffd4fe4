"""Convert the installed MiniLM to the ONNX graph the default embedding runtime runs (seconds, no network).

    python scripts/prepare_onnx_model.py

``scripts/setup.sh`` runs it on every fresh environment; it does nothing when the graph is there. Where the graph
lives and why: :mod:`explorer.providers.onnx_model`.
"""

from __future__ import annotations

import time

from explorer.providers.embeddings import LocalEmbedder
from explorer.providers.onnx_model import GRAPH, convert, onnx_dir


def main() -> None:
    model_dir = LocalEmbedder().model_dir
    target = onnx_dir()
    if (target / GRAPH).exists():
        print(f"setup: the ONNX embedding model is in {target}")
        return
    started = time.perf_counter()
    convert(model_dir, target)
    print(f"setup: converted the embedding model to ONNX in {time.perf_counter() - started:.1f} s: {target}")


if __name__ == "__main__":
    main()
