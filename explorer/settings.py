"""One settings object for paths, models and budgets.

Read from environment variables, then an optional ``explorer.toml`` (in the
working directory, or the file named by ``EXPLORER_CONFIG``). API keys are never
read here: litellm reads them from each provider's own environment variables,
so they cannot leak into the database or the logs.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from platformdirs import user_data_dir

from explorer.errors import ExplorerError

DEFAULT_EMBEDDING_MODEL = "local:all-MiniLM-L6-v2"
SERVER_SCHEMES = ("postgresql://", "postgres://")  # the URL forms libpq reads; any other location is a file
# A query parameter of a server URL that carries a secret: the password, or the one of the client's TLS key.
_PASSWORD_PARAMETER = re.compile(r"[?&](?:ssl)?password=([^&]*)")


@dataclass(frozen=True)
class Settings:
    """Where the data lives and which models answer.

    ``local_model`` and ``cloud_model`` are litellm model names (for example
    ``ollama/llama3.1`` and ``anthropic/claude-sonnet-4-5``); either may be unset.
    When both are unset every prompt is answered by the built-in offline provider.
    ``cloud_budget_cents`` is the default budget of every run that calls priced models
    (a wander session, an ingest, a night of dreaming); ``prices`` gives dollars per
    million (input, output) tokens for models litellm has no price for; ``concurrency``
    is how many independent model calls are in flight at once. ``nats_url`` (``NATS_URL``) names a NATS server
    every stored event is also published to, under its own subject (unset: events are only stored).
    ``structured`` says how a JSON answer's schema is sent to a model (:data:`STRUCTURED`; ``auto``: in the
    strongest form its provider takes, see :mod:`explorer.providers.structured`).
    ``tokens`` names the people of a shared deployment, name → token: the API accepts each token and logs a
    review made with it under its name (kept out of ``repr``, so a printed settings object shows no secret).
    """

    # a DuckDB file, or a PostgreSQL URL (postgresql://user:pass@host:5432/dbname) for a shared store
    db_path: Path | str = field(default_factory=lambda: Path(user_data_dir("dream-explorer")) / "explorer.duckdb")
    local_model: str | None = None
    cloud_model: str | None = None
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    api_base: str | None = None
    timeout_s: float = 60.0
    retries: int = 2
    lock_wait_s: float = 15.0
    cloud_budget_cents: int = 500
    concurrency: int = 8
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    answer_caps: dict[str, int] = field(default_factory=dict)  # characters by prompt kind, over the defaults
    structured: str = "auto"
    seed: int = 0
    nats_url: str | None = None
    tokens: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def offline(self) -> bool:
        """Whether no model is configured, so every prompt is answered offline (the demo, the tests)."""
        return not (self.local_model or self.cloud_model)

    def with_db(self, db: str | Path | None) -> Settings:
        """The same settings on another database (a ``--db`` option), or these when none is given."""
        return self if db is None else replace(self, db_path=database_location(db))


_ENV = {
    "EXPLORER_DB": ("db_path", Path),
    "EXPLORER_LOCAL_MODEL": ("local_model", str),
    "EXPLORER_CLOUD_MODEL": ("cloud_model", str),
    "EXPLORER_EMBEDDING_MODEL": ("embedding_model", str),
    "EXPLORER_API_BASE": ("api_base", str),
    "EXPLORER_TIMEOUT": ("timeout_s", float),
    "EXPLORER_RETRIES": ("retries", int),
    "EXPLORER_LOCK_WAIT": ("lock_wait_s", float),
    "EXPLORER_BUDGET_CENTS": ("cloud_budget_cents", int),
    "EXPLORER_CONCURRENCY": ("concurrency", int),
    "EXPLORER_PRICES": ("prices", dict),
    "EXPLORER_ANSWER_CAPS": ("answer_caps", dict),
    "EXPLORER_STRUCTURED": ("structured", str),
    "EXPLORER_SEED": ("seed", int),
    "NATS_URL": ("nats_url", str),  # the name NATS tools read, so one variable serves them and Dream Explorer
    "EXPLORER_TOKENS": ("tokens", dict),
}
# How a JSON answer's schema is sent: chosen per model, forced to the OpenAI form, llama.cpp's JSON mode with the
# schema, or not sent at all.
STRUCTURED = ("auto", "json_schema", "json_object", "off")
_LIMITS = {"concurrency": (1, 64), "retries": (0, 10), "timeout_s": (0.1, 3600.0), "cloud_budget_cents": (0, 10**7)}


class SettingsError(ExplorerError):
    """A configuration value that cannot be used."""


def _coerce(name: str, kind: type, raw: object) -> object:
    if raw in ("", None):
        return None
    if name in ("tokens", "EXPLORER_TOKENS"):
        return _tokens(name, raw)
    if kind is dict:
        table = _table(name, raw)
        return _prices(name, table) if name in ("prices", "EXPLORER_PRICES") else table
    try:
        return database_location(str(raw)) if kind is Path else kind(raw)
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"setting {name}: cannot read {raw!r} as {kind.__name__}") from exc


def database_location(given: str | Path) -> Path | str:
    """Where the database is: a PostgreSQL URL as given (a path would fold its ``//``), else a file (``~`` read).

    Example::

        database_location("~/kb.duckdb")  # Path('/home/ana/kb.duckdb')
        database_location("postgresql://ana@db.lan/kb")  # 'postgresql://ana@db.lan/kb'
    """
    text = str(given)
    return text if is_server_url(text) else Path(text).expanduser()


def is_server_url(location: str | Path) -> bool:
    """Whether a database location (``--db``, ``EXPLORER_DB``) names a PostgreSQL server rather than a file."""
    return str(location).startswith(SERVER_SCHEMES)


def shown_location(location: str | Path) -> str:
    """A database location as it may be shown or logged: a server URL with each password it gives replaced by
    ``***`` (in its user info or as a ``password=`` of its query), a file's path as it is.

    Example::

        shown_location("postgresql://ana:s3cret@db.lan/kb")  # 'postgresql://ana:***@db.lan/kb'
        shown_location("postgresql://ana@db.lan/kb?password=s3cret&sslmode=require")
        # 'postgresql://ana@db.lan/kb?password=***&sslmode=require'
    """
    text = str(location)
    if not is_server_url(text):
        return text
    for start, end in sorted(_password_spans(text), reverse=True):
        text = f"{text[:start]}***{text[end:]}"
    return text


def without_password(message: str, location: str | Path) -> str:
    """``message`` (a database error, say) with ``location``'s passwords masked wherever they appear: the URL
    whole, and each password alone, as given or percent-decoded, since libpq quotes a part it cannot read
    (``invalid percent-encoded token: "..."``). A password is masked where it stands as a whole token, so a
    short one does not mask the letters of every word it is part of.
    """
    url = str(location)
    if not is_server_url(url):
        return message
    message = message.replace(url, shown_location(url))
    passwords = {form for start, end in _password_spans(url) for form in _forms(url[start:end])}
    for password in sorted(passwords, key=len, reverse=True):  # a password before any part of it
        message = re.sub(rf"(?<![A-Za-z0-9]){re.escape(password)}(?![A-Za-z0-9])", "***", message)
    return message


def _password_spans(url: str) -> list[tuple[int, int]]:
    """Where a server URL gives a password, read as libpq reads it, or wider: in the user info (up to the last
    ``@`` before the first ``/``, since libpq takes a ``?`` there as part of the password and an ``@`` the person
    forgot to encode must not leave the rest shown) after the user's ``:``; and the value of each
    ``password=`` or ``sslpassword=`` parameter, up to the next ``&``.
    """
    start = url.index("://") + 3
    slash = url.find("/", start)
    head = url[start : slash if slash >= 0 else len(url)]
    spans = [(match.start(1), match.end(1)) for match in _PASSWORD_PARAMETER.finditer(url)]
    at = head.rfind("@")
    colon = head.find(":", 0, at) if at >= 0 else -1
    if colon >= 0:
        spans.append((start + colon + 1, start + at))
    return _merged(spans)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans that overlap (a ``password=`` inside a user info that swallowed a query) as one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _forms(password: str) -> set[str]:
    """A password as the URL gives it and as libpq decodes it (the same when it holds no valid ``%XX``)."""
    return {form for form in (password, unquote(password)) if form}


def _table(name: str, raw: object) -> dict[str, Any]:
    """A TOML table, or a JSON object given in an environment variable."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"setting {name}: not JSON ({exc.msg})") from exc
    if not isinstance(raw, dict):
        raise SettingsError(f"setting {name}: give a table (a JSON object in the environment)")
    return raw


def _prices(name: str, raw: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """``{"model": [input, output]}`` in dollars per million tokens."""
    prices = {}
    for model, pair in raw.items():
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or not all(isinstance(p, int | float) and not isinstance(p, bool) and 0 <= p < 1e6 for p in pair)
        ):
            raise SettingsError(f"setting {name}: the price of {model!r} must be [input, output] dollars per million")
        prices[str(model)] = (float(pair[0]), float(pair[1]))
    return prices


# A token's characters are those of an RFC 6750 bearer credential, so any HTTP client sends it as it is; 16 or
# more of them (secrets.token_urlsafe() gives 43) keep guessing out of reach. A name is what a review log shows.
TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{16,}")
TOKEN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")


def _tokens(name: str, raw: object) -> dict[str, str]:
    """Name → token, from ``"ana=TOKEN,ben=TOKEN"`` (an environment variable) or a TOML table.

    An error names the entry by its place, never by what it holds: a name and a token written the wrong way
    round would otherwise put the token in the error line, and from there in a terminal's history or a log.
    """
    if isinstance(raw, str):
        entries = [entry.strip().partition("=") for entry in raw.split(",") if entry.strip()]
        if not all(sep for _, sep, _ in entries):
            raise SettingsError(f"setting {name}: give name=token pairs separated by commas")
        pairs: list[tuple[str, object]] = [(person.strip(), token.strip()) for person, _, token in entries]
    elif isinstance(raw, dict):
        pairs = list(raw.items())
    else:
        raise SettingsError(f"setting {name}: give a table of name = token")
    tokens: dict[str, str] = {}
    for place, (person, token) in enumerate(pairs, start=1):
        where = f"setting {name}, entry {place}"
        if not TOKEN_NAME.fullmatch(person):
            raise SettingsError(f"{where}: a name is a letter, then up to 63 letters, digits, '.', '_' or '-'")
        if person.lower() in (known.lower() for known in tokens):
            raise SettingsError(f"{where}: the name is given twice (names must differ in more than case)")
        if not isinstance(token, str) or not TOKEN.fullmatch(token):
            raise SettingsError(f"{where}: a token is 16 or more of A-Z a-z 0-9 . _ ~ + / = -")
        if token in tokens.values():
            raise SettingsError(f"{where}: the token is another person's too; each person needs their own")
        tokens[person] = token
    return tokens


def _check_limits(values: dict[str, Any]) -> None:
    for attr, (low, high) in _LIMITS.items():
        value = values.get(attr)
        if value is not None and not low <= value <= high:
            raise SettingsError(f"setting {attr}: {value} is outside {low}..{high}")
    if values.get("structured", "auto") not in STRUCTURED:
        raise SettingsError(f"setting structured: {values['structured']!r} is not one of {', '.join(STRUCTURED)}")


def load_settings(environ: dict[str, str] | None = None, config_file: Path | None = None) -> Settings:
    """Settings from ``explorer.toml`` overridden by environment variables."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}  # each value was coerced to its field's type by _coerce
    path = config_file or Path(env.get("EXPLORER_CONFIG", "explorer.toml"))
    if path.is_file():
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: not valid TOML ({exc})") from exc
        kinds = {attr: kind for attr, kind in _ENV.values()}
        for key, raw in table.get("explorer", table).items():
            if key in ("db", "database"):
                key = "db_path"
            if key not in kinds:
                raise SettingsError(f"{path}: unknown setting {key!r}")
            values[key] = _coerce(key, kinds[key], raw)
    for var, (attr, kind) in _ENV.items():
        if var in env:
            values[attr] = _coerce(var, kind, env[var])
    values = {
        k: v for k, v in values.items() if v is not None or k in ("local_model", "cloud_model", "api_base", "nats_url")
    }
    _check_limits(values)
    return replace(Settings(), **values)
