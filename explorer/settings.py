"""One settings object for paths, models and budgets.

Read from environment variables, then an optional ``explorer.toml`` (in the working directory, or the file named by
``EXPLORER_CONFIG``). API keys are never read here: litellm reads them from each provider's own environment
variables, so they cannot leak into the database or the logs.

Each setting is declared once, as a field of :class:`Settings`: its type and bounds (pydantic checks them), its
default, its environment variable (the field's alias) and its description (its docstring), from which
``scripts/gen_settings_reference.py`` generates ``docs/reference/settings.md``. It is a pydantic dataclass, not
pydantic-settings' ``BaseSettings``: code and tests derive settings with ``dataclasses.replace``, a ``BaseSettings``
reads the process environment whenever one is made (a test's ``Settings()`` would take a developer's
``EXPLORER_DB``), and :func:`load_settings` is given the environment to read. What that leaves by hand, one variable
per field and one TOML table, is a few lines of :func:`load_settings`.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote

from platformdirs import user_data_dir
from pydantic import BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from explorer.errors import ExplorerError

DEFAULT_EMBEDDING_MODEL = "local:all-MiniLM-L6-v2"
SERVER_SCHEMES = ("postgresql://", "postgres://")  # the URL forms libpq reads; any other location is a file
# A query parameter of a server URL that carries a secret: the password, or the one of the client's TLS key.
_PASSWORD_PARAMETER = re.compile(r"[?&](?:ssl)?password=([^&]*)")
# A token's characters are those of an RFC 6750 bearer credential, so any HTTP client sends it as it is; 16 or
# more of them (secrets.token_urlsafe() gives 43) keep guessing out of reach. A name is what a review log shows.
TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{16,}")
TOKEN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,63}")


class SettingsError(ExplorerError):
    """A configuration value that cannot be used."""


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


def _table(raw: object) -> object:
    """A TOML table as it is, or the JSON object an environment variable gives."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None


def _tokens(raw: object) -> dict[str, str]:
    """Name → token, from ``"ana=TOKEN,ben=TOKEN"`` (an environment variable) or a TOML table.

    An error names the entry by its place, never by what it holds: a name and a token written the wrong way
    round would otherwise put the token in the error line, and from there in a terminal's history or a log.
    """
    if isinstance(raw, str):
        entries = [entry.strip().partition("=") for entry in raw.split(",") if entry.strip()]
        if not all(sep for _, sep, _ in entries):
            raise ValueError("give name=token pairs separated by commas")
        pairs: list[tuple[object, object]] = [(person.strip(), token.strip()) for person, _, token in entries]
    elif isinstance(raw, dict):
        pairs = list(raw.items())
    else:
        raise ValueError("give a table of name = token")
    tokens: dict[str, str] = {}
    for place, (person, token) in enumerate(pairs, start=1):
        if not isinstance(person, str) or not TOKEN_NAME.fullmatch(person):
            raise ValueError(f"entry {place}: a name is a letter, then up to 63 letters, digits, '.', '_' or '-'")
        if person.lower() in (known.lower() for known in tokens):
            raise ValueError(f"entry {place}: the name is given twice (names must differ in more than case)")
        if not isinstance(token, str) or not TOKEN.fullmatch(token):
            raise ValueError(f"entry {place}: a token is 16 or more of A-Z a-z 0-9 . _ ~ + / = -")
        if token in tokens.values():
            raise ValueError(f"entry {place}: the token is another person's too; each person needs their own")
        tokens[person] = token
    return tokens


Price = Annotated[float, Field(ge=0, lt=1e6)]  # dollars per million tokens


@dataclass(frozen=True, config=ConfigDict(validate_by_name=True, use_attribute_docstrings=True))
class Settings:
    """Where the data lives and which models answer: each field's docstring says what it does, its alias names
    its environment variable, and its name is its ``explorer.toml`` key.
    """

    db_path: Annotated[Path | str, BeforeValidator(database_location)] = Field(
        default_factory=lambda: Path(user_data_dir("dream-explorer")) / "explorer.duckdb",
        validation_alias="EXPLORER_DB",
    )
    """The DuckDB file, or `postgresql://user:pass@host:5432/dbname` for a shared PostgreSQL with pgvector; every
    command also takes `--db`. By default `explorer.duckdb` in the user data folder."""
    local_model: str | None = Field(default=None, validation_alias="EXPLORER_LOCAL_MODEL")
    """The litellm model for routine calls, e.g. `ollama/llama3.1`. With neither model set, every prompt is answered
    by the built-in offline provider."""
    cloud_model: str | None = Field(default=None, validation_alias="EXPLORER_CLOUD_MODEL")
    """The litellm model for high-value calls, e.g. `anthropic/claude-sonnet-4-5`."""
    embedding_model: str = Field(default=DEFAULT_EMBEDDING_MODEL, validation_alias="EXPLORER_EMBEDDING_MODEL")
    """`local:all-MiniLM-L6-v2`, `hashing` (hashed words and word pairs: instant, no torch, but it knows only shared
    words: for tests and quick trials, not discovery), or any litellm embedding model."""
    embedding_runtime: Literal["onnx", "torch"] = Field(default="onnx", validation_alias="EXPLORER_EMBEDDING_RUNTIME")
    """What runs the local model: `onnx` (onnxruntime on a graph the set-up converts from the installed weights;
    starts in a fraction of a second, without torch) or `torch` (sentence-transformers; about 7 s to start). Both
    give the same vectors, so a database built on one is read and extended on the other."""
    api_base: str | None = Field(default=None, validation_alias="EXPLORER_API_BASE")
    """The base URL of a local model server (Ollama, vLLM, llama.cpp ...)."""
    timeout_s: float = Field(default=60.0, ge=0.1, le=3600.0, validation_alias="EXPLORER_TIMEOUT")
    """Seconds one attempt of a model call or a remote embedding may take, for the whole request (connect, first
    byte and whole body: a server trickling its answer is cut off at it). A call takes at most timeout × (retries +
    1) plus 0.5 s + 1 s ... of backoff; a cancelled job abandons the call or embedding it waits on."""
    retries: int = Field(default=2, ge=0, le=10, validation_alias="EXPLORER_RETRIES")
    """Retries of a model call or a remote embedding, with backoff; these are the only retries (the HTTP client's
    and litellm's own are off)."""
    lock_wait_s: float = Field(default=15.0, validation_alias="EXPLORER_LOCK_WAIT")
    """Seconds to wait for another process holding the database."""
    cloud_budget_cents: int = Field(default=500, ge=0, le=10**7, validation_alias="EXPLORER_BUDGET_CENTS")
    """The default budget of every run that calls priced models (a wander session, an ingest, a night of dreaming;
    `--budget-cents` on each command). Each attempt is reserved at its worst case (the whole prompt and a full
    answer) before it is made and counted at its real cost after, never more than that reservation, so no budget is
    ever exceeded; a wander step the budget cannot cover goes to the local model, other runs stop asking and say
    so."""
    concurrency: int = Field(default=8, ge=1, le=64, validation_alias="EXPLORER_CONCURRENCY")
    """Model requests in flight at once, for independent items (dreams, judgements, merges, a document's implants
    and insights). Results are kept in order, so a seeded run is the same at any setting; the offline provider
    always answers one at a time."""
    prices: Annotated[dict[str, tuple[Price, Price]], BeforeValidator(_table)] = Field(
        default_factory=dict, validation_alias="EXPLORER_PRICES"
    )
    """Dollars per million (input, output) tokens for models litellm does not price, as JSON
    `{"openai/my-model": [0.15, 0.6]}` (or an `[explorer.prices]` table); an unpriced model counts as free."""
    answer_caps: Annotated[dict[str, int], BeforeValidator(_table)] = Field(
        default_factory=dict, validation_alias="EXPLORER_ANSWER_CAPS"
    )
    """The longest answer accepted per prompt kind, in characters, as JSON `{"implant": 1500}` (or an
    `[explorer.answer_caps]` table); by default 6 characters per token of the prompt's `max_tokens`."""
    structured: Literal["auto", "json_schema", "json_object", "off"] = Field(
        default="auto", validation_alias="EXPLORER_STRUCTURED"
    )
    """How a JSON answer's schema is sent: `auto` chooses per model (see `explorer/providers/structured.py`),
    `json_schema` or `json_object` (with the schema) says where to begin, `off` sends nothing. A server that refuses
    a form is asked again at once in the next weaker form, which is kept for 7 days (in `<db>.forms.json`, or the
    user cache folder for a server)."""
    seed: int = Field(default=0, validation_alias="EXPLORER_SEED")
    """The seed of the offline provider."""
    nats_url: str | None = Field(default=None, validation_alias="NATS_URL")  # the variable NATS tools read too
    """A NATS server (`nats://127.0.0.1:4222`) every stored event is also published to, under the subject it is
    stored with, as JSON. The store stays the record: a server that is away costs a run nothing (a warning, once)."""
    tokens: Annotated[dict[str, str], BeforeValidator(_tokens)] = Field(
        default_factory=dict,
        validation_alias="EXPLORER_TOKENS",
        repr=False,  # a printed Settings shows no secret
    )
    """The people of a shared deployment, `name=token` pairs separated by commas (or an `[explorer.tokens]` table):
    each token opens the API and the app, and a review made with it is logged under its name. A name is a letter
    then up to 63 letters, digits, `.`, `_`, `-`; a token is 16 or more of `A-Z a-z 0-9 . _ ~ + / = -`, each
    person their own."""

    @property
    def offline(self) -> bool:
        """Whether no model is configured, so every prompt is answered offline (the demo, the tests)."""
        return not (self.local_model or self.cloud_model)

    def with_db(self, db: str | Path | None) -> Settings:
        """The same settings on another database (a ``--db`` option), or these when none is given."""
        return self if db is None else replace(self, db_path=db)


FIELDS: dict[str, FieldInfo] = Settings.__pydantic_fields__  # type: ignore[attr-defined]
VARIABLES = {name: str(field.validation_alias) for name, field in FIELDS.items()}  # each field's variable
TOML_NAMES = {"db": "db_path", "database": "db_path"}  # keys explorer.toml may use besides the fields' names


def load_settings(environ: dict[str, str] | None = None, config_file: Path | None = None) -> Settings:
    """Settings from ``explorer.toml`` overridden by environment variables; an empty value means the default."""
    env = os.environ if environ is None else environ
    path = config_file or Path(env.get("EXPLORER_CONFIG", "explorer.toml"))
    given = {name: (name, value) for name, value in _toml_settings(path).items()}  # field → (its source's name, value)
    given |= {name: (variable, env[variable]) for name, variable in VARIABLES.items() if variable in env}
    try:
        return Settings(**{name: value for name, (_, value) in given.items() if value != ""})
    except ValidationError as exc:  # not chained: its text quotes the value, which may be a token
        error = exc.errors()[0]
        raise SettingsError(f"setting {given[str(error['loc'][0])][0]}: {_problem(error)}") from None


def _toml_settings(path: Path) -> dict[str, Any]:
    """The ``[explorer]`` table of a TOML file (or the whole file), by field name; nothing when there is no file."""
    if not path.is_file():
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc})") from exc
    settings = {TOML_NAMES.get(key, key): value for key, value in table.get("explorer", table).items()}
    unknown = next((key for key in settings if key not in FIELDS), None)
    if unknown is not None:
        raise SettingsError(f"{path}: unknown setting {unknown!r}")
    return settings


def _problem(error: ErrorDetails) -> str:
    """One validation error in words: this module's own checks say it themselves, and never quote the value (a
    token's); pydantic's quote the value and where in a table it stands.
    """
    if error["type"] == "value_error":
        return str(error.get("ctx", {}).get("error", error["msg"]))
    where = ".".join(map(str, error["loc"][1:]))  # in a table: the key, then the place in its value
    place = f" at {where}" if where else ""
    return f"cannot use {error['input']!r}{place}: {error['msg'][:1].lower()}{error['msg'][1:]}"
