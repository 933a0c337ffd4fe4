"""Prompts of Wander (wander.md): dwelling, analogy, crystallization, validation.

The dwelling prompt is the spec's DWELLING_PROMPT word for word; its JSON
example's braces are doubled only so that ``str.format`` leaves them alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.prompts import Prompt, clamp01, clean_text, extract_json

# -- dwelling ------------------------------------------------------------------

DWELLING_PROMPT = """You are dwelling at a point in idea space, reflecting on an encounter between two concepts.

CURRENT LOCUS:
{current_concept}
- Domains: {current_domains}
- Abstraction level: {current_abstraction}

ENCOUNTERED LOCUS:
{next_concept}
- Domains: {next_domains}
- Abstraction level: {next_abstraction}

RECENT THEMES FROM THIS SESSION:
{recent_themes}

ACTIVE RESONANCES (patterns we've seen before):
{active_resonances}

Reflect on this encounter. For each question, provide a concise response (1-2 sentences):

1. CONNECTION: What links these two concepts? What do they share?
2. TENSION: Where do they conflict or create productive friction?
3. BRIDGE: What crosses domains here? What translation is possible?
4. SURPRISE: What's unexpected about this juxtaposition?
5. POSSIBILITY: What new concept or insight might emerge from this encounter?

Also extract:
- THEMES: List 3-5 thematic keywords
- INTERESTINGNESS: Rate 0.0-1.0 how interesting this encounter is
- ACTIONABILITY: Rate 0.0-1.0 how actionable insights here might be

Respond in JSON format:
{{
  "connection": "...",
  "tension": "...",
  "bridge": "...",
  "surprise": "...",
  "possibility": "...",
  "themes": ["...", "..."],
  "interestingness": 0.X,
  "actionability": 0.X
}}"""

REFLECTIONS = ("connection", "tension", "bridge", "surprise", "possibility")
MAX_THEMES = 5


@dataclass(frozen=True)
class Dwelling:
    """The reflection at one step of a wander: five answers about the encounter, its themes (which feed
    resonances) and its ratings (which feed selection and the trace).
    """

    connection: str
    tension: str
    bridge: str
    surprise: str
    possibility: str
    themes: tuple[str, ...]
    interestingness: float
    actionability: float


def _themes(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return ()
    seen: dict[str, str] = {}
    for item in value:
        theme = clean_text(str(item)).strip(".").strip() if isinstance(item, (str, int, float)) else ""
        if theme and len(theme) <= 80 and theme.lower() not in seen:
            seen[theme.lower()] = theme
    return tuple(seen.values())[:MAX_THEMES]


def parse_dwelling(text: str) -> Dwelling | None:
    """The five reflections, themes and ratings; ``None`` without themes, ratings or most reflections."""
    data = extract_json(text)
    if not isinstance(data, dict):
        return None
    data = {str(k).lower(): v for k, v in data.items()}
    reflections = {k: clean_text(str(data[k])) if isinstance(data.get(k), str) else "" for k in REFLECTIONS}
    themes = _themes(data.get("themes"))
    interest, action = clamp01(data.get("interestingness")), clamp01(data.get("actionability"))
    if not themes or interest is None or action is None or sum(bool(v) for v in reflections.values()) < 3:
        return None
    return Dwelling(**reflections, themes=themes, interestingness=interest, actionability=action)


DWELLING = Prompt[Dwelling](
    kind="wander_dwell",
    template=DWELLING_PROMPT,
    parse=parse_dwelling,
    temperature=0.7,
    max_tokens=600,
    json_answer=True,
)

# -- analogical reasoning ------------------------------------------------------


@dataclass(frozen=True)
class Analogy:
    """A concept from another domain that shares the locus's structure: a candidate next locus for the walk."""

    concept: str
    domain: str | None
    rationale: str


def parse_analogies(text: str) -> list[Analogy] | None:
    """``{"analogies": [{concept, domain, rationale}]}`` (or a bare list); an empty list is a valid answer."""
    data = extract_json(text)
    if isinstance(data, dict):
        data = data.get("analogies")
    if not isinstance(data, list):
        return None
    found = []
    for item in data:
        if not isinstance(item, dict):
            continue
        concept = clean_text(str(item.get("concept") or ""))
        if 3 <= len(concept) <= 600:
            domain = clean_text(str(item.get("domain") or "")) or None
            found.append(Analogy(concept, domain, clean_text(str(item.get("rationale") or ""))))
    return found if found or not data else None


ANALOGY = Prompt[list[Analogy]](
    kind="wander_analogy",
    template=(
        "You are exploring idea space by analogy.\n\n"
        "CURRENT LOCUS:\n{concept}\n- Domains: {domains}\n\n"
        "PASSAGES FROM OTHER DOMAINS (for inspiration; you may go beyond them):\n{elsewhere}\n\n"
        "Propose up to {count} concepts from other domains that are analogous to the current locus: things that "
        "share its structure or mechanism while looking different on the surface. For each, name the concept in one "
        "sentence, its domain, and the shared structure.\n\n"
        "Respond in JSON format:\n"
        '{{"analogies": [{{"concept": "...", "domain": "...", "rationale": "..."}}]}}'
    ),
    parse=parse_analogies,
    temperature=0.9,
    max_tokens=500,
    json_answer=True,
)

# -- crystallization -----------------------------------------------------------


@dataclass(frozen=True)
class CrystalDraft:
    """A crystal as first proposed from a recurring pattern, before validation decides whether it is kept."""

    insight: str
    confidence: float
    actionability: float
    domains: tuple[str, ...]


def parse_crystal(text: str) -> CrystalDraft | None:
    """The insight, its ratings and domains; ``None`` for a too-short insight or missing ratings."""
    data = extract_json(text)
    if not isinstance(data, dict):
        return None
    insight = clean_text(str(data.get("insight") or ""))
    confidence, action = clamp01(data.get("confidence")), clamp01(data.get("actionability"))
    if len(insight) < 10 or confidence is None or action is None:
        return None
    domains = data.get("domains") or []
    domains = (
        tuple(dict.fromkeys(clean_text(str(d)) for d in domains if clean_text(str(d))))
        if isinstance(domains, list)
        else ()
    )
    return CrystalDraft(insight, confidence, action, domains)


CRYSTALLIZE = Prompt[CrystalDraft](
    kind="wander_crystallize",
    template=(
        "A pattern keeps recurring while wandering through idea space.\n\n"
        "RECURRING THEMES: {themes}\n\n"
        "WHERE IT SURFACED NOW:\n{locus}\n- Domains: {domains}\n\n"
        "EVIDENCE (reflections and passages where the pattern appeared):\n{evidence}\n\n"
        "State the single insight this pattern points to, in 1-3 sentences, grounded in the evidence. Rate your "
        "confidence that the evidence supports it (0.0-1.0) and how actionable it is (0.0-1.0), and list the domains "
        "it spans.\n\n"
        "Respond in JSON format:\n"
        '{{"insight": "...", "confidence": 0.X, "actionability": 0.X, "domains": ["..."]}}'
    ),
    parse=parse_crystal,
    temperature=0.4,
    max_tokens=400,
    json_answer=True,
)

# -- validation ----------------------------------------------------------------


@dataclass(frozen=True)
class Validation:
    """The check of a crystal's insight against its evidence: whether to keep it, and how sure."""

    valid: bool
    confidence: float
    notes: str


def parse_validation(text: str) -> Validation | None:
    """The verdict (it must be a real boolean), a confidence (0.5 when not given) and notes."""
    data = extract_json(text)
    if not isinstance(data, dict) or not isinstance(data.get("valid"), bool):
        return None
    confidence = clamp01(data.get("confidence"), 0.5)
    return Validation(data["valid"], confidence, clean_text(str(data.get("notes") or "")))


VALIDATE = Prompt[Validation](
    kind="wander_validate",
    template=(
        "Check a proposed insight against its evidence before it is kept.\n\n"
        "INSIGHT:\n{insight}\n\n"
        "EVIDENCE:\n{evidence}\n\n"
        "Is the insight supported by the evidence, non-trivial and not a restatement of a single passage? Answer with "
        "a verdict, your confidence in the insight (0.0-1.0) and short notes saying which evidence supports or "
        "contradicts it.\n\n"
        "Respond in JSON format:\n"
        '{{"valid": true, "confidence": 0.X, "notes": "..."}}'
    ),
    parse=parse_validation,
    temperature=0.1,
    max_tokens=300,
    json_answer=True,
)
