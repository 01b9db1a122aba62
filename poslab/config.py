"""The library's settings (``Settings``) and the project's folder (``PROJECT_ROOT``).

``Settings.from_env()`` reads the environment each time it is called (nothing is cached, so a test
that changes a variable is seen at the next call) and returns a frozen dataclass. A variable that
is unset or empty takes its default:

``POSLAB_DB_URL``               SQLAlchemy URL of the progress store (default: the SQLite file
                                ``poslab.db`` in ``POSLAB_DATA_DIR``)
``POSLAB_DATA_DIR``             folder of that default SQLite file (default ``~/.poslab``). The app
                                creates it owner-only (0700) at start-up and narrows an existing
                                one; the store's files in it are 0600 (``private_folder``,
                                ``private_file``)
``POSLAB_INSTRUCTOR_PASSWORD``  password of the Instructor page (default: none). When it is
                                unset, the app looks for the ``instructor_password`` secret
                                (``app_pages/ui/instructor/lock.py``); without either, the page stays locked
``POSLAB_GRADER_TIMEOUT``       seconds of wall-clock time per exercise when grading (default 20;
                                anything but a finite number above 0 is a ``ValueError`` that
                                says so); ``grader.settings.GraderSettings`` takes it from here
``POSLAB_ROSTER``               a roster file (``poslab.roster``: plain CSV, Canvas or Moodle
                                export) the app makes the class's roster when it starts; a
                                roster is then active: students sign in with personal links
                                (default: none; the Instructor page can import one too)
``POSLAB_SIGNIN_DAYS``          days a browser stays signed in after its student's link
                                (default 30)
``POSLAB_TRUSTED_PROXIES``      addresses or networks of the reverse proxies in front of the app,
                                comma-separated (``127.0.0.1, 172.16.0.0/12``): only a connection
                                from one of them is believed about ``X-Forwarded-For`` (default:
                                none, the header is ignored)
``POSLAB_INSTRUCTORS``          the class's named instructors: emails or student keys, comma- or
                                space-separated (``parse_people``; default: none). With a login
                                or a roster, the Instructor page opens to them, signed in, with
                                every right (``poslab.roles``)
``POSLAB_TAS``                  the class's TAs, written the same way (default: none): they see
                                the Instructor page and may regrade, nothing more. With either
                                list set, a signed-in student named in neither is locked out

The other variables are read beside what they configure: the store's waits in
``poslab/store/limits.py``, the lab's live quick run's in ``poslab/experiments/config.py``, the
sandbox's in ``grader/settings.py``, the grading service's in ``grader/service/``, the app's own
(``POSLAB_GRADER_START``, ``POSLAB_LOCAL_WORKSPACE``) in ``app_pages/ui/``. The README's Configuration
table lists every one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from poslab.signin import Network, parse_trusted_proxies

PROJECT_ROOT = Path(__file__).resolve().parent.parent  # the checkout or the student bundle
PRIVATE_FOLDER_MODE = 0o700  # the data folder, the grading cluster's certificates
PRIVATE_FILE_MODE = 0o600  # the store, its -wal/-shm, its backups, a private key


def private_folder(path: Path) -> Path:
    """Create ``path`` (and missing parents) readable by its owner only, or narrow an existing one."""
    path = Path(path).expanduser()
    path.mkdir(mode=PRIVATE_FOLDER_MODE, parents=True, exist_ok=True)
    path.chmod(PRIVATE_FOLDER_MODE)
    return path


def private_file(path: Path, create: bool = True) -> Path:
    """Make ``path`` 0600: created empty with that mode if missing (``create``), narrowed if it exists.

    Call it before anything writes a file another user must not read (the store, a backup, a key):
    created this way it is never readable by others, even for a moment."""
    path = Path(path).expanduser()
    if create:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE_MODE))
    if path.exists():
        path.chmod(PRIVATE_FILE_MODE)
    return path


def private_sqlite_files(database: Path) -> None:
    """The SQLite store and its ``-wal``/``-shm`` files, 0600 (SQLite gives those the database's mode)."""
    private_file(database)
    for suffix in ("-wal", "-shm", "-journal"):
        private_file(Path(f"{database}{suffix}"), create=False)


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to a file only its owner can read (a certificate's key)."""
    private_file(path)
    path.write_text(text)
    return path


def parse_people(text: str | None) -> frozenset[str]:
    """``POSLAB_INSTRUCTORS`` and ``POSLAB_TAS``: emails or student keys, comma-, semicolon- or space-separated.

    Emails are compared in lower case (as ``poslab.lms_sheets.student_key`` keys them); other keys
    as written. The one parser of both: whatever gives instructors or TAs their rights reads them here."""
    entries = (entry.strip() for entry in (text or "").replace(";", ",").replace(",", " ").split())
    return frozenset(entry.lower() if "@" in entry else entry for entry in entries if entry)


def _float(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number greater than 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class Settings:
    db_url: str
    instructor_password: str | None
    grader_timeout: float
    roster_file: Path | None = None
    signin_days: float = 30.0
    trusted_proxies: tuple[Network, ...] = ()
    data_dir: Path = Path.home() / ".poslab"
    instructors: frozenset[str] = frozenset()
    tas: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        data_dir = Path(env.get("POSLAB_DATA_DIR") or Path.home() / ".poslab")
        db_url = env.get("POSLAB_DB_URL") or f"sqlite:///{data_dir / 'poslab.db'}"
        return cls(
            db_url=db_url,
            instructor_password=env.get("POSLAB_INSTRUCTOR_PASSWORD") or None,
            grader_timeout=_float(env, "POSLAB_GRADER_TIMEOUT", 20.0),
            roster_file=Path(env["POSLAB_ROSTER"]).expanduser() if env.get("POSLAB_ROSTER", "").strip() else None,
            signin_days=_float(env, "POSLAB_SIGNIN_DAYS", 30.0),
            trusted_proxies=parse_trusted_proxies(env.get("POSLAB_TRUSTED_PROXIES")),
            data_dir=data_dir.expanduser(),
            instructors=parse_people(env.get("POSLAB_INSTRUCTORS")),
            tas=parse_people(env.get("POSLAB_TAS")),
        )
