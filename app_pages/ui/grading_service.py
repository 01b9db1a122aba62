"""The app's one grading service, shared by the server's start-up, the Exercises page (hand-ins and
practice runs: ``app_pages/ui/exercise/grading.py``) and the Instructor page (regrades)."""

from __future__ import annotations

from app_pages.runtime.process import one_per_process
from app_pages.ui.store_calls import open_store, store
from grader.service import GradingService
from poslab.config import Settings


@one_per_process  # the server's start-up and every page share it (process.py)
def _service(db_url: str) -> GradingService:
    return GradingService.from_env(store=open_store(db_url))


def grading_service() -> GradingService | None:
    """The app's one grading service (one per process and database); None, after saying why, without a store."""
    if store() is None:
        return None  # store() has said why: without a store a submission could be lost
    return _service(Settings.from_env().db_url)
