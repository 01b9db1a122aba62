"""``python -m poslab.store.new_revision "add the audit log"``: a new revision of the store.

Compares the tables in ``poslab/store/schema.py`` (and ``signin_schema.py``) with a scratch SQLite
store upgraded to the head, and writes ``alembic/versions/NNNN_<message>.py`` (the next number)
with what changed, for you to read, complete and test (``docs/store.md``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import sqlalchemy as sa
from alembic import command

from . import revisions


def new_revision(message: str) -> Path:
    number = f"{int(revisions.head()) + 1:04d}" if revisions.head().isdigit() else None
    with tempfile.TemporaryDirectory() as folder:
        engine = sa.create_engine(f"sqlite:///{Path(folder) / 'head.db'}")
        try:
            with engine.begin() as conn:
                command.upgrade(revisions.alembic_config(conn), "head")
                written = command.revision(revisions.alembic_config(conn), message, autogenerate=True, rev_id=number)
        finally:
            engine.dispose()
    revisions.script_directory.cache_clear()
    (script,) = written if isinstance(written, list) else (written,)
    return Path(script.path)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].strip():
        sys.exit('usage: python -m poslab.store.new_revision "what the revision changes"')
    print(f"wrote {new_revision(sys.argv[1])}: read it, complete it, and add its upgrade test (docs/store.md)")
