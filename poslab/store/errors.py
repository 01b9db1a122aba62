"""The store's own exceptions: each one ends in a sentence a person can act on.

Bad input is a plain ``ValueError`` (see ``validation``); these are for the database itself.
"""

from __future__ import annotations


class StoreError(RuntimeError):
    """The progress database could not do what was asked; the message says why and what to do."""


class StoreBusyError(StoreError):
    """Another process held the database's write lock for longer than the store waits."""

    def __init__(self, waited_seconds: float) -> None:
        super().__init__(
            f"The progress database is busy: another program kept it locked for more than "
            f"{waited_seconds:g} seconds, so this change was not saved. Please try again in a moment."
        )
        self.waited_seconds = waited_seconds


class StoreUnavailableError(StoreError):
    """The database could not be opened or reached (a wrong URL or path, a server that is down)."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(
            f"The progress database at {where} could not be used ({reason}). Check POSLAB_DB_URL "
            f"(or POSLAB_DATA_DIR) and, for a database server, that it is running."
        )
        self.where = where
        self.reason = reason


class SchemaVersionError(StoreError):
    """The database was written by a newer Position Lab than the one running (a revision unknown here)."""

    def __init__(self, found: str, head: str) -> None:
        super().__init__(
            f"The progress database is at schema revision {found}, which this Position Lab does not know "
            f"(it knows revisions up to {head}): a newer Position Lab wrote it. Upgrade Position Lab "
            f"before opening this database."
        )
        self.found = found
        self.head = head


class StoreFullError(StoreError):
    """The disk (or the database's quota) is full: nothing of this change was written."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"The disk that holds the progress database ({where}) is full, so this change was not saved; "
            "everything saved before is safe. Tell your instructor: once space is freed, saving works again."
        )
        self.where = where


class StoreInterruptedError(StoreError):
    """The connection to the database server broke while a change was being committed."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"The connection to the progress database at {where} broke while this change was being saved, "
            "so it may not have been saved. Please check, and do it again if it is missing."
        )
        self.where = where
