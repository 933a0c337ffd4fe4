from pathlib import Path

import pytest

from explorer.settings import Settings, SettingsError, load_settings


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
        ("", {"EXPLORER_RETRIES": "many"}, "cannot read 'many' as int"),
        (
            "",
            {"EXPLORER_STRUCTURED": "grammar"},
            "structured: 'grammar' is not one of auto, json_schema, json_object, off",
        ),
        (
            "[explorer]\nstructured = 'JSON'\n",
            {},
            "structured: 'JSON' is not one of auto, json_schema, json_object, off",
        ),
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
