"""Session archives (docs/wander.md#visual-encoding-for-session-archives).

One session becomes: the map as PNG at 1024×1024 and 512×512 (path, stars,
halos, legend, title), a compressed text summary of at most 2,000 tokens for a
language model's context, and the full JSON (everything but the vectors). The
app offers it as one zip; ``explorer export`` writes the files to a folder.

PNGs are drawn by kaleido in one headless Chromium kept for the whole process:
starting a browser per image costs ~3.5 s, reusing one ~0.8 s.
"""

from __future__ import annotations

import io
import json
import re
import threading
import warnings
import zipfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explorer.errors import ExplorerError
from explorer.figures.map import session_map
from explorer.projection import update_projection
from explorer.providers.gateway import OFFLINE_MODEL
from explorer.records.wander import SessionView
from explorer.runtime import Runtime
from explorer.text import plain_markdown, shorten
from explorer.views import map_data
from explorer.wander import service as wander

PNG_SIZES: tuple[int, ...] = (1024, 512)
MAX_SUMMARY_TOKENS = 2000
WEBGL_ABOVE = 5000  # nodes: beyond this the corpus is drawn with WebGL (SVG with 50k points is slow to render)
OFFLINE_NOTE = (
    "Model output in this session came from the built-in offline provider (offline/extractive): "
    "keyphrases and sentences of the input chosen by embedding similarity, not a language model."
)


class ExportError(ExplorerError):
    """The archive could not be written where it was asked to go (a file in the way, no permission, a full disk)."""


@dataclass(frozen=True)
class SessionArchive:
    """Where the files of an exported session were written, so a surface can name them."""

    png_1024: Path
    png_512: Path
    summary: Path
    json: Path

    def to_json(self) -> dict[str, str]:
        """The paths as text, as ``explorer export --json`` prints them."""
        return {name: str(value) for name, value in asdict(self).items()}


# -- PNG ------------------------------------------------------------------------

_kaleido_lock = threading.Lock()


def render_png(figure: go.Figure, width: int, height: int) -> bytes:
    """The figure as PNG bytes, through one long-lived kaleido browser (started on first use)."""
    import kaleido

    with _kaleido_lock:  # kaleido's server answers one call at a time through shared queues
        kaleido.start_sync_server(silence_warnings=True)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The kopts argument is ignored")
            return figure.to_image(format="png", width=width, height=height, scale=1)


def map_figure(runtime: Runtime, session_id: str, size: int, view: SessionView | None = None) -> go.Figure:
    """The session's map for an archive, its newest loci placed first (a view itself never writes), and the map
    fitted first if it never was: read from the command line, notes have no map until something fits one, and an
    archive of an unfitted map drew nothing.
    """
    update_projection(runtime)
    data = map_data(runtime, session_id, view=view)
    return session_map(data, webgl=len(data.nodes) > WEBGL_ABOVE, width=size, height=size)


# -- JSON -----------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """Records as JSON values, without their vectors (a 384-float list says nothing to a reader)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in fields(value)
            if not isinstance(getattr(value, f.name), np.ndarray) and not f.name.endswith("embedding")
        }
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return None
    return value


def session_record(runtime: Runtime, session_id: str, view: SessionView | None = None) -> dict[str, Any]:
    """The whole session as JSON: configuration, loci, trace, residues, resonances, crystals, warm memory, events."""
    view = view or wander.session_view(runtime, session_id)
    record = _plain(view)
    record["session"]["fence"] = [{"concept": a.concept, "action": a.action} for a in view.session.fence]
    record["resonances"] = [{**_plain(r), "current_strength": round(r.current_strength(), 4)} for r in view.resonances]
    record["events"] = [
        {"seq": e.seq, "subject": e.subject, "payload": e.payload, "created_at": e.created_at.isoformat()}
        for e in wander.session_events(runtime, view.session.id, limit=100_000)
    ]
    record["format"] = "dream-explorer session archive, version 1"
    return record


# -- summary ----------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """About four characters a token for English text with the common BPE tokenizers."""
    return (len(text) + 3) // 4


# Everything a model or a document wrote (names, concepts, insights, themes, domains, reasons) goes into the summary
# through these two: a Markdown viewer opening the file fetches no image, follows no link and renders no HTML of
# theirs, and a terminal printing it obeys no escape sequence.
def _one_line(text: str | None, words: int) -> str:
    """The first ``words`` words of an untrusted text, on one line, inert in Markdown."""
    return plain_markdown(shorten(" ".join((text or "").split()), words))


def _listed(items: Iterable[str]) -> str:
    """Untrusted names (themes, domains, models) as one inert, comma-separated line."""
    return ", ".join(_one_line(item, 12) for item in items)


def session_summary(view: SessionView, max_tokens: int = MAX_SUMMARY_TOKENS) -> str:
    """A Markdown digest of the session for a language model's context: what it is,
    where it went, what recurred and what it concluded, within ``max_tokens``.

    Detail is shed until it fits: first fewer path steps and shorter lines,
    then fewer reflections; the header, crystals and resonances are kept longest.
    """
    for path_steps, words, reflections in ((60, 24, 12), (40, 18, 8), (25, 14, 5), (15, 10, 3), (8, 8, 0), (0, 6, 0)):
        text = _summary(view, path_steps, words, reflections)
        if estimate_tokens(text) <= max_tokens:
            return text
    return text[: max_tokens * 4].rsplit("\n", 1)[0] + "\n…\n"


def _summary(view: SessionView, path_steps: int, words: int, reflections: int) -> str:
    s = view.session
    loci = {locus.id: locus for locus in view.loci}
    models = sorted({r.model_used for r in view.residues if r.model_used})
    lines = [f"# Wander session: {_one_line(s.name, 30)}", ""]
    reason = f" ({_one_line(s.status_reason, 40)})" if s.status_reason else ""
    lines.append(f"- id {s.id}; status {s.status}{reason}")
    lines.append(
        f"- seed concept: {_one_line(s.seed_concept, 30)}"
        + (f"; attractor: {_one_line(s.attractor, 20)}" if s.attractor else "")
    )
    if s.allowed_domains or s.forbidden_domains:
        allowed = _listed(s.allowed_domains or []) or "any"
        forbidden = _listed(s.forbidden_domains or []) or "none"
        lines.append(f"- domains allowed: {allowed}; forbidden: {forbidden}")
    lines.append(
        f"- {s.step_count} steps of at most {s.max_steps}; {len(view.loci)} loci; temperature {s.temperature}; "
        f"checkpoint every {s.human_checkpoint_frequency or 'never'}"
    )
    lines.append(
        f"- model calls: {s.local_calls} local, {s.cloud_calls} cloud, {s.offline_calls} offline; "
        f"cloud spend {s.cloud_spent_cents:.2f} of {s.cloud_budget_cents} cents"
    )
    if models:
        lines.append(f"- dwelling written by: {_listed(models)}")
    if OFFLINE_MODEL in models:
        lines.append(f"- note: {OFFLINE_NOTE}")
    crystals = sorted(view.crystals, key=lambda c: -c.confidence)
    lines += ["", f"## Crystals ({len(crystals)})"]
    for c in crystals:
        state = c.review_state.value
        lines.append(
            f"- [{state}, confidence {c.confidence:.2f}, actionability {c.actionability:.2f}; "
            f"{_listed(c.domains) or 'no domain'}] {_one_line(c.insight, max(words * 2, 20))}"
        )
    if not crystals:
        lines.append("- none yet")
    live = sorted((r for r in view.resonances if r.status != "invalidated"), key=lambda r: -r.current_strength())
    lines += ["", f"## Resonances ({len(live)} live)"]
    for r in live[:12]:
        lines.append(
            f"- {_listed(r.themes[:5])}: {r.status}, {r.occurrences} occurrences, strength {r.current_strength():.2f}"
        )
    if not live:
        lines.append("- none yet")
    trace = sorted(view.trace, key=lambda t: t.step_number)
    if path_steps and trace:
        shown = (
            trace if len(trace) <= path_steps else [trace[int(i)] for i in np.linspace(0, len(trace) - 1, path_steps)]
        )
        lines += ["", f"## Path ({len(trace)} steps" + (f", {len(shown)} shown)" if len(shown) < len(trace) else ")")]
        start = loci.get(trace[0].from_locus_id or "")
        if start is not None:
            lines.append(f"0. {_one_line(start.concept, words)}")
        for t in shown:
            locus = loci.get(t.to_locus_id)
            domain = f" [{_listed(locus.domains[:2])}]" if locus is not None and locus.domains else ""
            concept = _one_line(locus.concept, words) if locus is not None else t.to_locus_id
            lines.append(f"{t.step_number}. ({_one_line(t.strategy, 4) or '?'}){domain} {concept}")
    if reflections and view.residues:
        best = sorted(view.residues, key=lambda r: -(r.interestingness or 0))[:reflections]
        lines += ["", "## Most interesting encounters"]
        for residue in best:
            there = loci.get(residue.to_locus_id)
            lines.append(
                f"- at {_one_line(there.concept if there else residue.to_locus_id, 8)} "
                f"(interest {residue.interestingness or 0:.2f}; themes {_listed(residue.themes[:4])})"
            )
            for label, value in (("connection", residue.connection), ("possibility", residue.possibility)):
                if value:
                    lines.append(f"  - {label}: {_one_line(value, words)}")
    return "\n".join(lines) + "\n"


# -- archive ----------------------------------------------------------------------


def _stem(view: SessionView) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", view.session.name.lower()).strip("-")[:40] or "session"
    return f"{slug}-{view.session.id[:8]}"


def archive_files(runtime: Runtime, session_id: str) -> dict[str, bytes]:
    """File name → content for the whole archive."""
    view = wander.session_view(runtime, session_id)
    stem = _stem(view)
    files = {
        f"{stem}-map-{size}.png": render_png(map_figure(runtime, session_id, size, view), size, size)
        for size in PNG_SIZES
    }
    files[f"{stem}-summary.md"] = session_summary(view).encode("utf-8")
    files[f"{stem}-session.json"] = json.dumps(
        session_record(runtime, session_id, view), indent=1, ensure_ascii=False
    ).encode("utf-8")
    return files


def export_session(runtime: Runtime, session_id: str, directory: str | Path) -> SessionArchive:
    """Write the two PNGs, the summary and the JSON into ``directory`` (created if missing).

    The session is looked up and the folder made before the maps are drawn, so a mistyped id or an unusable
    folder is reported at once; a folder that cannot be made or written is an :class:`ExportError`.
    """
    directory = Path(directory)
    session_id = wander.get_session(runtime, session_id).id
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"cannot write the archive into {directory}: it is a file, not a folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot make the folder {directory}: {_reason(exc)}", subject=str(directory)) from exc
    written = {}
    for name, content in archive_files(runtime, session_id).items():
        try:
            (directory / name).write_bytes(content)
        except OSError as exc:
            raise ExportError(f"cannot write {directory / name}: {_reason(exc)}", subject=str(directory)) from exc
        written[name] = directory / name
    by_end = {
        end: path
        for name, path in written.items()
        for end in ("-1024.png", "-512.png", "-summary.md", "-session.json")
        if name.endswith(end)
    }
    return SessionArchive(by_end["-1024.png"], by_end["-512.png"], by_end["-summary.md"], by_end["-session.json"])


def _reason(exc: OSError) -> str:
    """What the operating system said, without its error number and path (the message names the path)."""
    return exc.strerror or str(exc)


def archive_zip(runtime: Runtime, session_id: str) -> bytes:
    """The archive as one zip, for a download button."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in archive_files(runtime, session_id).items():
            archive.writestr(name, content)
    return buffer.getvalue()
