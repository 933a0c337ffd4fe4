"""A real small model end to end, and the context a local model needs (``python -m bench.models --real|--context``).

``--real``: the run of tests/real_model (:mod:`explorer.testing.full_run`: read two documents, walk, crystallize,
dream a night, consolidate) against llama.cpp's server with SmolLM2-135M-Instruct (``scripts/setup_local_model.sh``
installs both), on each corpus and once for each way of asking for structured answers, ``structured="off"`` and
``"auto"``. Two corpora, so that no prompt is judged on the notes it was written with:

- ``demo``: six fortunes of each of the demo's domains and two alike notes read offline, then the two short notes
  of tests/real_model read by the model, and a walk from "memory and forgetting";
- ``docs``: real documentation, the demo's What's New pages (Python's, PSF licence) read offline but two, then
  one section of each of those two read by the model, and a walk from "variable scoping".

Per corpus and prompt kind: the answers accepted of those asked in each mode, and with ``auto`` the median latency
and the median prompt and answer tokens the server counted; then the share of all answers and of the walk's
dwellings accepted, the requests the server refused for their answer form (learnt once per server and database),
the time per step, per dream and per night, and why each refused answer was refused. One request at a time and no
retries, so each answer is judged on its own. It is a robustness check, not a quality claim.

``--context``: the same run on the demo corpus (all of sample_data read through the gateway), answered offline,
every prompt counted in SmolLM2's tokens through its chat template, as llama.cpp's server counts it. A prompt and
its longest answer (``max_tokens``) must fit the server's context, or llama.cpp shortens the answer silently.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.models import hashing_runtime
from explorer.prompts import Prompt, load_prompts
from explorer.reading.ingest import ingest_paths
from explorer.records.calls import FORM_REFUSED, CallRecord
from explorer.runtime import Runtime
from explorer.testing.full_run import SEED_CONCEPT, FullRun, full_run, read_fortunes
from explorer.testing.llama_server import N_CTX, SERVED_MODEL, LlamaServer, missing, model_path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
WHATSNEW = sorted((SAMPLE / "python-whatsnew").glob("*.md"))
EXPERIENCES = REPO / "tests" / "data" / "experiences_sample.jsonl"
MODES = ("off", "auto")
REM_KINDS = ("rem_question", "rem_synthesis", "dream_relation")
EXCERPT_WORDS = 220  # one chunk: a section's opening, as a note is about one thing


@dataclass(frozen=True)
class Corpus:
    """What a run walks and dreams over (read offline, fast), what the model reads, and where the walk starts."""

    name: str
    seed_concept: str
    read_offline: Callable[[Runtime, Path], int]  # documents added
    documents: Callable[[Path], list[Path]]


def fortunes(runtime: Runtime, folder: Path) -> int:
    return read_fortunes(runtime, folder).documents_added


def notes(folder: Path) -> list[Path]:
    return sorted((REPO / "tests" / "real_model" / "documents").glob("*.md"))


HELD_OUT = (WHATSNEW[1], WHATSNEW[-3])  # 2.1 and 3.7: one page of each language, read by the model


def whatsnew(runtime: Runtime, folder: Path) -> int:
    return ingest_paths(runtime, [page for page in WHATSNEW if page not in HELD_OUT]).documents_added


def sections(folder: Path) -> list[Path]:
    """The opening paragraphs (about :data:`EXCERPT_WORDS` words) of each held-out page's first section after its
    introduction, under the page's front matter.
    """
    excerpts = []
    for page in HELD_OUT:
        _, front, body = page.read_text(encoding="utf-8").split("---\n", 2)
        kept: list[str] = []
        for paragraph in body.split("\n## ")[2].split("\n\n"):
            if sum(len(p.split()) for p in kept) >= EXCERPT_WORDS:
                break
            kept.append(paragraph)
        excerpt = folder / f"{page.stem}-section.md"
        excerpt.write_text("---\n" + front + "---\n\n## " + "\n\n".join(kept) + "\n", encoding="utf-8")
        excerpts.append(excerpt)
    return excerpts


CORPORA = {
    "demo": Corpus("demo", SEED_CONCEPT, fortunes, notes),
    "docs": Corpus("docs", "variable scoping", whatsnew, sections),
}


def read_over(corpus: Corpus, folder: Path) -> Path:
    """A database holding ``corpus``'s base, read offline."""
    path = folder / f"{corpus.name}.duckdb"
    added = corpus.read_offline(hashing_runtime(path), folder)
    print(f"{corpus.name}: {added} documents read offline")
    return path


def real_run(base: Path, server: LlamaServer, corpus: Corpus, structured: str, steps: int, dreams: int) -> FullRun:
    path = base.with_name(f"{corpus.name}-{structured}.duckdb")
    shutil.copy(base, path)
    runtime = hashing_runtime(
        path,
        local_model=SERVED_MODEL,
        api_base=server.url,
        concurrency=1,
        retries=0,
        timeout_s=120.0,
        structured=structured,
    )
    documents = corpus.documents(base.parent)
    return full_run(runtime, documents, EXPERIENCES, steps=steps, dreams=dreams, seed_concept=corpus.seed_concept)


def by_kind(calls: Sequence[CallRecord]) -> dict[str, list[CallRecord]]:
    """The model's answers by prompt kind: local calls, less the requests refused for their answer form (asked again
    at once in a weaker one: no answer to judge).
    """
    kinds: dict[str, list[CallRecord]] = defaultdict(list)
    for call in calls:
        if call.tier == "local" and call.outcome != FORM_REFUSED:
            kinds[call.purpose].append(call)
    return kinds


def accepted(calls: Sequence[CallRecord]) -> str:
    return f"{sum(c.outcome == 'ok' for c in calls)}/{len(calls)}" if calls else "-"


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def print_real(corpus: str, runs: dict[str, FullRun], dreams: int) -> None:
    kinds = {mode: by_kind(run.calls) for mode, run in runs.items()}
    last = MODES[-1] if MODES[-1] in runs else next(iter(runs))
    print(f"\n{corpus:<28} {'off':>7} {'auto':>7} {'latency':>9} {'prompt':>7} {'answer':>7}")
    for kind in load_prompts():
        calls = kinds[last].get(kind, [])
        print(f"{kind:<28} {accepted(kinds.get('off', {}).get(kind, [])):>7} {accepted(calls):>7} {medians(calls)}")
    every = {mode: [c for calls in kinds[mode].values() for c in calls] for mode in runs}
    shares = "  ".join(f"{mode} {accepted(every[mode])} ({share(every[mode]):.0%})" for mode in runs)
    print(f"{'all':<28} {shares}")
    dwell = "  ".join(
        f"{mode} {accepted(kinds[mode]['wander_dwell'])} ({share(kinds[mode]['wander_dwell']):.0%})" for mode in runs
    )
    print(f"{'dwellings':<28} {dwell}")
    refused = "  ".join(f"{mode} {sum(c.outcome == FORM_REFUSED for c in run.calls)}" for mode, run in runs.items())
    print(f"{'answer form refused':<28} {refused}")
    for mode in runs:
        print(f"\nrefused with structured={mode}:")
        for kind, calls in kinds[mode].items():
            for reason, times in Counter(refusal(c) for c in calls if c.outcome != "ok").most_common():
                print(f"  {kind}: {times} x {reason}")
    for mode, run in runs.items():
        rem_s = sum(c.latency_ms for kind in REM_KINDS for c in kinds[mode].get(kind, [])) / 1000
        print(
            f"{mode}: a step {median(run.step_seconds):.1f} s (median of {len(run.step_seconds)}), "
            f"a dream {rem_s / dreams:.1f} s, the night {run.night_seconds:.0f} s"
        )


def refusal(call: CallRecord) -> str:
    """Why an answer was refused, without the model's name the call log begins it with, in at most 160 characters."""
    return shortened((call.error or call.outcome).split(" was refused: ", 1)[-1])


def shortened(text: str, limit: int = 160) -> str:
    """``text`` on one line, in at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def medians(calls: Sequence[CallRecord]) -> str:
    """Median latency, prompt and answer tokens, as the table's last three columns ("-" for a kind never asked)."""
    if not calls:
        return f"{'-':>9} {'-':>7} {'-':>7}"
    latency = median([c.latency_ms for c in calls]) / 1000
    return (
        f"{latency:>8.1f}s {median([c.prompt_tokens for c in calls]):>7.0f} "
        f"{median([c.completion_tokens for c in calls]):>7.0f}"
    )


def share(calls: Sequence[CallRecord]) -> float:
    return sum(c.outcome == "ok" for c in calls) / len(calls) if calls else 0.0


def real(
    corpora: Sequence[str] = tuple(CORPORA), modes: Sequence[str] = MODES, steps: int = 10, dreams: int = 1
) -> None:
    """The real-model run on each corpus, with structured answers off, then on (auto); a table per corpus."""
    reason = missing()
    if reason is not None:
        raise SystemExit(reason)
    with tempfile.TemporaryDirectory() as folder, LlamaServer(log=Path(folder) / "server.log") as server:
        os.environ.update(server.env())
        for name in corpora:
            corpus = CORPORA[name]
            base = read_over(corpus, Path(folder))
            runs = {}
            for mode in modes:
                runs[mode] = real_run(base, server, corpus, mode, steps, dreams)
                print(f"{name}, structured={mode}: {len(by_kind(runs[mode].calls))} prompt kinds asked", flush=True)
            print_real(name, runs, dreams)
            for mode, run in runs.items():
                print(f"{mode}, the crystal: {shortened(run.crystallized)}")


class Recorder:
    """The offline answerer, recording every prompt it is asked (the ``--context`` count)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.asked = inner, []

    def answer(self, prompt: Prompt[Any], fields: dict[str, Any]) -> str:
        self.asked.append((prompt, prompt.messages(fields)))
        return self.inner.answer(prompt, fields)

    def prepare(self, requests: Sequence[tuple[Prompt[Any], dict[str, Any]]]) -> None:
        self.inner.prepare(requests)


def chat_tokens() -> Any:
    """A function counting a chat's tokens as llama.cpp's server does: SmolLM2's chat template, its tokenizer."""
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    vocabulary = Llama(model_path=str(model_path()), vocab_only=True, verbose=False)
    metadata = vocabulary.metadata
    template = Jinja2ChatFormatter(
        metadata["tokenizer.chat_template"],
        eos_token=vocabulary.detokenize([vocabulary.token_eos()]).decode(),
        bos_token=vocabulary.detokenize([vocabulary.token_bos()]).decode(),
    )

    def count(messages: list[dict[str, str]]) -> int:
        prompt = template(messages=messages).prompt
        return len(vocabulary.tokenize(prompt.encode(), add_bos=False, special=True))

    return count


def context(steps: int = 10, dreams: int = 1) -> None:
    """Each prompt kind's tokens on the demo corpus, and the context that holds the longest with its answer."""
    reason = missing()
    if reason is not None:
        raise SystemExit(reason)
    count = chat_tokens()
    with tempfile.TemporaryDirectory() as folder:
        runtime = hashing_runtime(Path(folder) / "demo.duckdb")
        recorder = Recorder(runtime.gateway.offline)
        runtime.gateway.offline = recorder
        full_run(runtime, [SAMPLE], EXPERIENCES, steps=steps, dreams=dreams)
    sizes: dict[str, list[int]] = defaultdict(list)
    for prompt, messages in recorder.asked:
        sizes[prompt.kind].append(count(messages))
    print(f"\n{'prompt kind':<28} {'asked':>6} {'median':>7} {'longest':>8} {'answer':>7} {'needs':>6}")
    needed = 0
    for kind, prompt in load_prompts().items():
        counts = sizes.get(kind, [])
        need = max(counts, default=0) + prompt.max_tokens
        needed = max(needed, need)
        print(
            f"{kind:<28} {len(counts):>6} {median(counts):>7.0f} {max(counts, default=0):>8} "
            f"{prompt.max_tokens:>7} {need:>6}"
        )
    print(f"a local model needs n_ctx >= {needed} (the tests' server runs with {N_CTX})")
