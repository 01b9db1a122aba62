"""Which sandbox grades the class's code, said once at start-up in the log and on the Instructor page.

Without bubblewrap the grader falls back to a plain subprocess that can read whatever its user may
(``grader.sandbox``): fine for a student on their own laptop, not for a class. The judges of the
embedded grading service run on this machine, so the check here is theirs (``planned_isolation``,
bubblewrap's own check, cached per process). A remote cluster's judges log their own isolation.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.logger import get_logger

from app_pages.runtime.process import one_per_process
from grader.service import ServiceSettings, planned_isolation
from grader.vocabulary import Isolation

logger = get_logger(__name__)  # Streamlit's handler and format: the app's log
INSTALL = "install bubblewrap (apt-get install bubblewrap) before grading a real class"


@dataclass(frozen=True)
class SandboxReport:
    isolation: Isolation | None  # None: the judges run on a remote cluster
    why_not_bubblewrap: str | None
    scheduler: str | None

    @property
    def sentence(self) -> str:
        if self.isolation is None:
            return (
                f"Submissions are graded on the Dask cluster at {self.scheduler}: each worker's log says "
                "whether it uses bubblewrap."
            )
        if self.isolation == Isolation.BWRAP:
            return "Submissions are graded in bubblewrap sandboxes on this machine (no network, no project files)."
        return (
            f"Submissions are graded WITHOUT bubblewrap on this machine ({self.why_not_bubblewrap}): the "
            f"fallback is a plain subprocess that can read whatever its user may. To grade a class, {INSTALL}."
        )


@one_per_process  # the server's start-up says it, the Instructor page shows it (process.py)
def _report(_: None) -> SandboxReport:
    settings = ServiceSettings.from_env()
    if settings.scheduler is not None:
        report = SandboxReport(None, None, settings.scheduler)
    else:
        report = SandboxReport(*planned_isolation(settings.grader), None)
    (logger.info if report.isolation != Isolation.FALLBACK else logger.warning)("%s", report.sentence)
    return report


def sandbox_report() -> SandboxReport:
    """Checked, and logged, once per app process."""
    return _report(None)


def show() -> None:
    """The report on the Instructor page: a warning without bubblewrap, a caption with it."""
    report = sandbox_report()
    if report.isolation == Isolation.FALLBACK:
        st.warning(report.sentence, icon=":material/warning:")
    else:
        st.caption(report.sentence)
