"""The progress store: every student's visits, quick-check answers, lessons done, hints, attempts
(handed in, and practice runs), drafts, grading jobs and comments, the class roster and its
sign-ins, in SQLite by default or any SQLAlchemy database (PostgreSQL for replicas).

Instructors script it::

    from poslab.store import Store
    store = Store()                     # POSLAB_DB_URL, or the SQLite file in POSLAB_DATA_DIR
    store.class_progress()              # a DataFrame, one row per student
"""

from .attempts import AttemptToRecord
from .catalogue import Catalogue
from .class_roster import RosterChange, RosterMember
from .engine import DATABASE_ERRORS
from .errors import SchemaVersionError, StoreBusyError, StoreError, StoreUnavailableError
from .extensions import GrantedExtension
from .pass_rates import PASS_RATE_COLUMNS, TestRow, pass_rates
from .results import Attempt, Comment, ExerciseProgress, LessonProgress, PracticeRun, StudentProgress
from .signin import LinkRefusal, SignIn, SignInState
from .store import Store
from .workspace import Draft, DraftSaved

__all__ = [
    "DATABASE_ERRORS",
    "PASS_RATE_COLUMNS",
    "Attempt",
    "AttemptToRecord",
    "Catalogue",
    "Comment",
    "Draft",
    "LinkRefusal",
    "DraftSaved",
    "ExerciseProgress",
    "GrantedExtension",
    "LessonProgress",
    "PracticeRun",
    "RosterChange",
    "RosterMember",
    "SchemaVersionError",
    "SignIn",
    "SignInState",
    "Store",
    "StoreBusyError",
    "StoreError",
    "StoreUnavailableError",
    "StudentProgress",
    "TestRow",
    "pass_rates",
]
