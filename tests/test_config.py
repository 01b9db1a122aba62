"""``poslab.config.Settings``: what its docstring promises about each variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from poslab.config import PROJECT_ROOT, Settings


def test_defaults_when_nothing_is_set():
    settings = Settings.from_env({})
    assert settings.db_url == f"sqlite:///{Path.home() / '.poslab' / 'poslab.db'}"
    assert settings.instructor_password is None
    assert settings.grader_timeout == 20.0


def test_an_empty_variable_counts_as_unset():
    empty = {"POSLAB_DB_URL": "", "POSLAB_DATA_DIR": "", "POSLAB_INSTRUCTOR_PASSWORD": "", "POSLAB_GRADER_TIMEOUT": " "}
    assert Settings.from_env(empty) == Settings.from_env({})


def test_the_data_dir_holds_the_default_database_and_a_url_wins_over_it(tmp_path):
    assert Settings.from_env({"POSLAB_DATA_DIR": str(tmp_path)}).db_url == f"sqlite:///{tmp_path}/poslab.db"
    both = {"POSLAB_DATA_DIR": str(tmp_path), "POSLAB_DB_URL": "postgresql+psycopg://db.example/poslab"}
    assert Settings.from_env(both).db_url == "postgresql+psycopg://db.example/poslab"


def test_the_environment_is_read_at_each_call(monkeypatch):
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", "first")
    assert Settings.from_env().instructor_password == "first"
    monkeypatch.setenv("POSLAB_INSTRUCTOR_PASSWORD", "second")
    assert Settings.from_env().instructor_password == "second"


@pytest.mark.parametrize("raw, seconds", [("7.5", 7.5), (" 30 ", 30.0), ("1e1", 10.0)])
def test_a_timeout_is_a_number_of_seconds(raw, seconds):
    assert Settings.from_env({"POSLAB_GRADER_TIMEOUT": raw}).grader_timeout == seconds


@pytest.mark.parametrize("raw", ["soon", "0", "-3", "nan", "inf", "-inf"])
def test_a_timeout_that_is_not_a_finite_positive_number_is_refused_by_name(raw):
    with pytest.raises(ValueError, match=f"POSLAB_GRADER_TIMEOUT must be .*{raw!r}"):
        Settings.from_env({"POSLAB_GRADER_TIMEOUT": raw})


def test_the_project_root_holds_the_app_and_the_packages():
    assert (PROJECT_ROOT / "app.py").is_file() and (PROJECT_ROOT / "poslab" / "config.py").is_file()
