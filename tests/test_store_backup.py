"""``python -m grader backup`` and ``restore`` on the app's store, SQLite and PostgreSQL: a backup,
a change, then a restore gives back the backed-up rows; a backup is 0600; a backup from a newer
schema is refused with a sentence and changes nothing.
"""

from __future__ import annotations

import sqlite3

import pytest
import sqlalchemy as sa
from test_store_revisions import read
from test_store_support import BACKENDS, TEST_CATALOGUE, database_url

from grader.cli import main
from poslab.store import Store


@pytest.fixture(params=BACKENDS)
def app_store(request, tmp_path, monkeypatch):
    """The app's store (POSLAB_DB_URL), with a few rows."""
    with database_url(request.param, tmp_path) as url:
        monkeypatch.setenv("POSLAB_DB_URL", url)
        store = Store(url, catalogue=TEST_CATALOGUE)
        store.record_visit("ann", "intro")
        store.add_comment("ann", "rope", "kept")
        store.save_draft("ann", "rope", "x = 1\n", saved_by="tab-1")
        yield url, store
        store.close()


def test_a_backup_a_change_and_a_restore_give_back_the_backed_up_rows(app_store, tmp_path, capsys):
    url, store = app_store
    before = read(url)
    target = tmp_path / "term.backup"
    assert main(["backup", str(target)]) == 0
    assert target.stat().st_mode & 0o777 == 0o600
    assert "backed up the progress database" in capsys.readouterr().out
    store.record_visit("bob", "alibi")
    store.delete_comment(store.comments("rope")[0].id)
    store.add_comment("bob", "rope", "written after the backup")
    store.close()
    assert read(url) != before
    assert main(["restore", str(target)]) == 0
    assert "restored the progress database" in capsys.readouterr().out
    assert read(url) == before
    reopened = Store(url, catalogue=TEST_CATALOGUE)
    assert reopened.students() == ("ann",) and [c.text for c in reopened.comments("rope")] == ["kept"]
    reopened.close()


def test_a_backup_from_a_newer_schema_is_refused_and_changes_nothing(app_store, tmp_path, capsys):
    url, store = app_store
    store.close()
    target = tmp_path / "newer.backup"
    engine = sa.create_engine(url)
    if url.startswith("sqlite"):
        assert main(["backup", str(target)]) == 0
        newer = sqlite3.connect(target)
        newer.execute("UPDATE alembic_version SET version_num = 'f00d'")
        newer.commit()
        newer.close()
    else:  # a store a newer Position Lab upgraded, backed up with pg_dump
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = 'f00d'"))
        assert main(["backup", str(target)]) == 0
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = '0006'"))
    engine.dispose()
    before = read(url)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["restore", str(target)])
    assert exit_info.value.code == 2
    assert "revision f00d, which this Position Lab does not know" in capsys.readouterr().err
    assert read(url) == before


def test_a_file_that_is_not_a_backup_is_refused(app_store, tmp_path, capsys):
    url, _ = app_store
    bogus = tmp_path / "notes.txt"
    bogus.write_text("not a database\n")
    with pytest.raises(SystemExit):
        main(["restore", str(bogus)])
    assert "backup" in capsys.readouterr().err
