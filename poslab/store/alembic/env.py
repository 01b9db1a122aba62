"""Alembic's environment for the store: the connection the store hands over, else the app's URL.

The app upgrades through ``poslab.store.revisions`` (one transaction, under the store's lock);
this file serves the ``alembic`` command line too (``docs/store.md``): there the URL is
``POSLAB_DB_URL``, else the SQLite file in ``POSLAB_DATA_DIR``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from poslab.config import Settings
from poslab.store.schema import metadata


def run_migrations(connection: sa.Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


given = context.config.attributes.get("connection")
if given is not None:
    run_migrations(given)
else:
    engine = sa.create_engine(context.config.get_main_option("sqlalchemy.url") or Settings.from_env().db_url)
    try:
        with engine.begin() as connection:
            run_migrations(connection)
    finally:
        engine.dispose()
