import runpy
from dataclasses import fields
from pathlib import Path

import pytest

from explorer.settings import (
    FIELDS,
    VARIABLES,
    Settings,
    SettingsError,
    is_server_url,
    load_settings,
    shown_location,
    without_password,
)


def test_environment_overrides_the_toml_file(tmp_path: Path) -> None:
    config = tmp_path / "explorer.toml"
    config.write_text('[explorer]\ndb = "~/notes.duckdb"\nlocal_model = "ollama/llama3.1"\ntimeout_s = 30\n')
    settings = load_settings({"EXPLORER_TIMEOUT": "12.5", "EXPLORER_CLOUD_MODEL": "gpt-4o-mini"}, config)
    assert settings.db_path == Path("~/notes.duckdb").expanduser()
    assert (settings.local_model, settings.cloud_model, settings.timeout_s) == ("ollama/llama3.1", "gpt-4o-mini", 12.5)
    assert not settings.offline


def test_defaults_run_offline(tmp_path: Path) -> None:
    settings = load_settings({}, tmp_path / "absent.toml")
    assert settings == Settings() and settings.offline
    assert settings.with_db(tmp_path / "x.duckdb").db_path == tmp_path / "x.duckdb"


@pytest.mark.parametrize(
    "content,env,message",
    [
        ("not = [toml", {}, "not valid TOML"),
        ("[explorer]\napi_key = 'sk-...'\n", {}, "unknown setting 'api_key'"),
        ("", {"EXPLORER_RETRIES": "many"}, "setting EXPLORER_RETRIES: cannot use 'many': input should be a valid int"),
        (
            "",
            {"EXPLORER_STRUCTURED": "grammar"},
            "setting EXPLORER_STRUCTURED: cannot use 'grammar': input should be 'auto', 'json_schema', 'json_object'",
        ),
        (
            "[explorer]\nstructured = 'JSON'\n",
            {},
            "setting structured: cannot use 'JSON': input should be 'auto', 'json_schema', 'json_object' or 'off'",
        ),
        (
            "[explorer]\nconcurrency = 100\n",
            {},
            "setting concurrency: cannot use 100: input should be less than or equal",
        ),
        (
            "",
            {"EXPLORER_TIMEOUT": "0"},
            "setting EXPLORER_TIMEOUT: cannot use '0': input should be greater than or equal",
        ),
        ("", {"EXPLORER_PRICES": "{x"}, "setting EXPLORER_PRICES: not JSON"),
        ("", {"EXPLORER_PRICES": '{"m": [1, -2]}'}, "setting EXPLORER_PRICES: cannot use -2 at m.1: input should be"),
        ("[explorer.prices]\nm = [1]\n", {}, r"setting prices: cannot use \[1\] at m.1: field required"),
        ("[explorer.answer_caps]\nimplant = 'long'\n", {}, "setting answer_caps: cannot use 'long' at implant"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, content: str, env: dict, message: str) -> None:
    config = tmp_path / "explorer.toml"
    config.write_text(content)
    with pytest.raises(SettingsError, match=message):
        load_settings(env, config)


def test_structured_answers_are_chosen_per_model_unless_a_setting_forces_a_form(tmp_path: Path) -> None:
    config = tmp_path / "explorer.toml"
    config.write_text('[explorer]\nstructured = "json_object"\n')
    assert load_settings({}, tmp_path / "absent.toml").structured == "auto"
    assert load_settings({}, config).structured == "json_object"
    assert load_settings({"EXPLORER_STRUCTURED": "off"}, config).structured == "off"


def test_a_postgresql_url_is_kept_whole_and_a_path_is_a_file(tmp_path) -> None:
    """A URL made a Path folds its ``//`` (the first try of one made a folder named ``postgresql:``)."""
    url = "postgresql://ana:s3cret@db.lan:5432/kb"
    assert load_settings({"EXPLORER_DB": url}, config_file=tmp_path / "none.toml").db_path == url
    assert Settings().with_db(url).db_path == url
    assert Settings().with_db("~/kb.duckdb").db_path == Path("~/kb.duckdb").expanduser()


# Each way a database location gives a password (or none): how it may be shown, and the passwords it gives.
LOCATIONS = [
    ("postgresql://ana:s3cret@db.lan:5432/kb", "postgresql://ana:***@db.lan:5432/kb", ["s3cret"]),
    ("postgres://ana:s3cret@db.lan/kb", "postgres://ana:***@db.lan/kb", ["s3cret"]),
    ("postgresql://ana@db.lan/kb?password=s3cret", "postgresql://ana@db.lan/kb?password=***", ["s3cret"]),
    (
        "postgresql://ana@db.lan/kb?sslmode=require&password=s3cret&connect_timeout=5",
        "postgresql://ana@db.lan/kb?sslmode=require&password=***&connect_timeout=5",
        ["s3cret"],
    ),
    (
        "postgresql://ana@db.lan/kb?sslpassword=k3y&sslmode=require",
        "postgresql://ana@db.lan/kb?sslpassword=***&sslmode=require",
        ["k3y"],
    ),
    ("postgresql://ana:Pw%zzSecret@db.lan/kb", "postgresql://ana:***@db.lan/kb", ["Pw%zzSecret"]),  # invalid %-encoding
    (
        "postgresql://ana@/kb?host=/run/pg&password=Pw%zzSecret",
        "postgresql://ana@/kb?host=/run/pg&password=***",
        ["Pw%zzSecret"],
    ),
    ("postgresql://ana:100%@db.lan/kb", "postgresql://ana:***@db.lan/kb", ["100%"]),  # a raw % at the end
    ("postgresql://ana:p%40ss@db.lan/kb", "postgresql://ana:***@db.lan/kb", ["p%40ss", "p@ss"]),  # an encoded @
    ("postgresql://ana:p@ss:w@rd@db.lan/kb", "postgresql://ana:***@db.lan/kb", ["p@ss:w@rd"]),  # @ and :, not encoded
    (
        "postgresql://ana:pa?ss@db.lan/kb",
        "postgresql://ana:***@db.lan/kb",
        ["pa?ss"],
    ),  # libpq reads the ? as the password's
    (
        "postgresql://ana:s3cret@db.lan/kb?password=0ther",
        "postgresql://ana:***@db.lan/kb?password=***",
        ["s3cret", "0ther"],
    ),
    ("postgresql://ana:@db.lan/kb", "postgresql://ana:***@db.lan/kb", []),
    ("postgresql://ana@db.lan:5432/kb", "postgresql://ana@db.lan:5432/kb", []),
    ("postgresql://db.lan/kb?user=ana&sslmode=require", "postgresql://db.lan/kb?user=ana&sslmode=require", []),
    ("postgresql:///kb", "postgresql:///kb", []),
    ("/home/ana/kb.duckdb", "/home/ana/kb.duckdb", []),
    # libpq's key=value conninfo is not a location the product reads (it would be a file's name), so it is kept
    ("password=s3cret host=db.lan", "password=s3cret host=db.lan", []),
]


@pytest.mark.parametrize(("location", "expected", "passwords"), LOCATIONS)
def test_a_database_location_is_shown_without_any_password(location: str, expected: str, passwords: list[str]) -> None:
    assert shown_location(location) == expected


@pytest.mark.parametrize(("location", "expected", "passwords"), LOCATIONS)
def test_a_message_is_masked_wherever_it_quotes_the_url_or_a_password(
    location: str, expected: str, passwords: list[str]
) -> None:
    """A driver may quote what it cannot read of a URL (libpq: ``invalid percent-encoded token: "Pw%zzSecret"``)."""
    message = f"cannot open database {location}: " + ", ".join(f'invalid token: "{p}"' for p in passwords)
    masked = without_password(message, location)
    assert masked.startswith(f"cannot open database {expected}: ")
    assert not [password for password in passwords if password in masked]
    assert masked.count('"***"') == len(passwords)


def test_a_password_is_masked_where_it_stands_as_a_whole_token() -> None:
    """Not inside other words: a one-letter password would otherwise mask every word that holds the letter."""
    assert without_password("cannot open database kb", "postgresql://ana:a@db.lan/kb") == "cannot open database kb"
    assert without_password("s3cret.duckdb is a file", "/data/s3cret.duckdb") == "s3cret.duckdb is a file"
    assert shown_location(Path("/data/kb.duckdb")) == "/data/kb.duckdb"


def test_a_server_url_is_told_from_a_file_in_one_place() -> None:
    assert is_server_url("postgresql://ana@db.lan/kb") and is_server_url("postgres://db.lan/kb")
    assert not is_server_url("kb.duckdb") and not is_server_url(Path("postgresql://kb")) and not is_server_url("")


def test_an_error_is_one_line_that_never_quotes_a_token(tmp_path: Path) -> None:
    """A name and a token the wrong way round must not put the token in a terminal's history or a log."""
    token = "a" * 20
    with pytest.raises(SettingsError) as caught:
        load_settings({"EXPLORER_TOKENS": f"{token}=ana"}, tmp_path / "absent.toml")
    message = str(caught.value)
    assert message == "setting EXPLORER_TOKENS: entry 1: a token is 16 or more of A-Z a-z 0-9 . _ ~ + / = -"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__  # no chained text quoting it


def test_the_toml_file_may_name_the_database_db_and_tables_are_json_in_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "explorer.toml"
    config.write_text('db = "/data/kb.duckdb"\n[prices]\n"openai/m" = [0.15, 0.6]\n')  # no [explorer]: the file
    settings = load_settings({"EXPLORER_ANSWER_CAPS": '{"implant": 1500}'}, config)
    assert settings.db_path == Path("/data/kb.duckdb") and settings.prices == {"openai/m": (0.15, 0.6)}
    assert settings.answer_caps == {"implant": 1500}


def test_an_empty_variable_means_the_default_even_over_the_file(tmp_path: Path) -> None:
    config = tmp_path / "explorer.toml"
    config.write_text('[explorer]\nlocal_model = "ollama/llama3.1"\nretries = 5\n')
    settings = load_settings({"EXPLORER_LOCAL_MODEL": "", "EXPLORER_RETRIES": ""}, config)
    assert (settings.local_model, settings.retries) == (None, 2) and settings.offline


def test_every_setting_has_a_variable_and_a_description() -> None:
    assert set(VARIABLES) == {field.name for field in fields(Settings)}
    for name, field in FIELDS.items():
        variable = str(field.validation_alias)
        assert variable.startswith("EXPLORER_") or variable == "NATS_URL", (
            f"Settings.{name}: give it validation_alias='EXPLORER_{name.upper()}' (docs/ENGINEERING.md, a setting)"
        )
        assert field.description, f"Settings.{name}: say what it does in a docstring under the field"


def test_the_settings_reference_is_the_one_the_fields_make() -> None:
    script = runpy.run_path(str(Path(__file__).resolve().parents[1] / "scripts" / "gen_settings_reference.py"))
    written = script["REFERENCE"].read_text(encoding="utf-8")
    assert written == script["render"](), (
        "docs/reference/settings.md is stale: run python scripts/gen_settings_reference.py"
    )
