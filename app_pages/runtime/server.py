"""The app's server side, which app.py hands to ``st.App``: what runs when the server starts, and
the HTTP route of the roster's sign-in links.

``lifespan`` runs once per app process, when ``streamlit run app.py`` starts the server and before
any page is opened:

* ``POSLAB_DATA_DIR`` is created readable by its owner only (0700), or narrowed if it exists;
* ``POSLAB_ROSTER``, if set, becomes the class's roster. A file that cannot be read, or that
  holds no student, stops the server with a sentence: a class meant to sign in must never fall
  back to typed names;
* in a thread (the lifespan runs on the server's event loop): the pages' libraries are imported,
  the grading service's judges are started (``POSLAB_GRADER_START=startup``), and the start-up
  heap is frozen (``heap.py``);
* when the server stops, the grading service closes (its judges stop; queued work stays in the
  store for the next start).

``/signin/<token>`` (a student's personal link): a GET shows whom the link signs in and a button;
its POST (from this app's own page: the ``Origin`` must be the app's, so no other site can sign a
browser in as someone else) checks the link in the store, opens a sign-in (its random session id
in an HttpOnly, SameSite=Lax cookie; its digest and expiry in the store, so every app process
knows it) and redirects to the app: the token leaves the address bar. A link that signs nobody in
redirects to ``/?signin=<why>``, and the sidebar says why.
"""

from __future__ import annotations

import asyncio
import html
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from streamlit import config
from streamlit.logger import get_logger

from app_pages.runtime import heap
from app_pages.ui.exercise import grading
from app_pages.ui.store_calls import open_store
from poslab.config import Settings, private_folder
from poslab.roster import read_roster
from poslab.signin import ROUTE, STATUS_PARAM, app_origin, cookie_name, same_origin
from poslab.store import DATABASE_ERRORS, RosterMember, StoreError

logger = get_logger(__name__)


# -- start-up -----------------------------------------------------------------------------------------


def import_roster_file(settings: Settings) -> None:
    """``POSLAB_ROSTER`` into the store (replacing the roster); RuntimeError says why it cannot be."""
    path = settings.roster_file
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RuntimeError(
            f"POSLAB_ROSTER={path}: the roster file cannot be read ({error.strerror or error})."
        ) from None
    roster = read_roster(data, f"The roster {path.name}")
    for problem in roster.problems:
        logger.warning("POSLAB_ROSTER: %s", problem)
    if not roster.students:
        raise RuntimeError(f"POSLAB_ROSTER={path}: no student could be read from it. " + " ".join(roster.problems[:3]))
    change = open_store(settings.db_url).replace_roster(roster.students, actor="POSLAB_ROSTER")
    logger.info(
        "POSLAB_ROSTER: %d students (%d new, %d left the roster)", len(roster.students), change.added, change.removed
    )


def warm_up() -> None:
    """The pages' imports, the grading judges, then the heap frozen: before the first student."""
    started = time.perf_counter()
    try:
        heap.import_page_libraries()
        service = grading.start_with_the_server()
        frozen = heap.freeze_start_up_heap()
        logger.info(
            "warmed up in %.1f s: the pages' libraries imported, %s, %d objects of the start-up heap frozen",
            time.perf_counter() - started,
            "the judges starting" if service else "judges on demand",
            frozen,
        )
    except Exception:  # noqa: BLE001 - the pages still work, and say why grading cannot
        logger.exception("warming up the app failed; the first page and submission will start what they need")


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    settings = Settings.from_env()  # a bad POSLAB_* value stops the start here, with its sentence
    private_folder(settings.data_dir)
    if settings.roster_file is not None:
        await asyncio.to_thread(import_roster_file, settings)
    threading.Thread(target=warm_up, name="poslab-warm-up", daemon=True).start()
    yield
    service = grading.started_service()
    if service is not None:
        await asyncio.to_thread(service.close)


# -- the sign-in link -----------------------------------------------------------------------------------


def app_path() -> str:
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/" if base else "/"


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    # The token never leaves in a Referer to another site; "no-referrer" would also blank the Origin
    # of the page's own POST, which is how that POST is told from another site's.
    response.headers["Referrer-Policy"] = "same-origin"
    return response


def _refused(why: str) -> Response:
    return _private(RedirectResponse(f"{app_path()}?{STATUS_PARAM}={why}", status_code=303))


def _unavailable() -> Response:
    return _private(
        PlainTextResponse(
            "The sign-in cannot be checked right now: the app's database cannot be "
            "reached. Please try the link again in a minute.",
            status_code=503,
        )
    )


def _origin(request: Request, settings: Settings) -> tuple[str, str, int] | None:
    """The app's origin as this request addressed it (``poslab.signin.app_origin``)."""
    return app_origin(
        request.headers.get("host"),
        request.url.scheme == "https",
        request.client.host if request.client else None,
        request.headers.get("x-forwarded-proto"),
        request.headers.get("x-forwarded-host"),
        settings.trusted_proxies,
    )


def _same_origin(request: Request) -> bool:
    """The request's ``Origin`` is the app's own: scheme, host and port (its POST routes ask this)."""
    return same_origin(request.headers.get("origin"), _origin(request, Settings.from_env()))


def _https(request: Request, settings: Settings) -> bool:
    origin = _origin(request, settings)
    return origin is not None and origin[0] == "https"


def confirm_page(member: RosterMember) -> str:
    who = html.escape(member.name if member.name == member.key else f"{member.name} ({member.key})")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in to Position Lab</title>
<style>body{{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#15130F}}
button{{font-size:1rem;padding:.6rem 1.2rem;background:#B5302D;color:#fff;border:0;border-radius:.4rem;cursor:pointer}}
</style></head><body>
<h1>Sign in to Position Lab</h1>
<p>This personal link signs this browser in as <strong>{who}</strong>. Your progress, drafts and submissions
are saved under this name. If this is not you, close this page.</p>
<form method="post"><button type="submit">Sign in as {html.escape(member.name)}</button></form>
</body></html>"""


def sign_in_page(request: Request) -> Response:
    """GET /signin/<token>: whom the link signs in, and a button (nothing is changed yet)."""
    try:
        found = open_store(Settings.from_env().db_url).link_holder(request.path_params["token"])
    except (StoreError, *DATABASE_ERRORS):
        return _unavailable()
    if isinstance(found, str):
        return _refused(found)
    return _private(HTMLResponse(confirm_page(found)))


def sign_in(request: Request) -> Response:
    """POST /signin/<token>: sign this browser in, set its cookie, and go to the app."""
    settings = Settings.from_env()
    origin = _origin(request, settings)
    if not same_origin(request.headers.get("origin"), origin):
        return _private(
            PlainTextResponse(
                "Sign in from the page your link opens (this request came from another site, or without its origin).",
                status_code=403,
            )
        )
    try:
        outcome = open_store(settings.db_url).sign_in_with_link(
            request.path_params["token"], timedelta(days=settings.signin_days)
        )
    except (StoreError, *DATABASE_ERRORS):
        return _unavailable()
    if isinstance(outcome, str):
        return _refused(outcome)
    response = RedirectResponse(app_path(), status_code=303)
    https = origin is not None and origin[0] == "https"
    response.set_cookie(
        cookie_name(https),
        outcome.session,
        max_age=int(timedelta(days=settings.signin_days).total_seconds()),
        path="/" if https else app_path(),  # a __Host- cookie must have Path=/
        httponly=True,
        samesite="lax",
        secure=https,
    )
    return _private(response)


def routes() -> list[Route]:
    from app_pages.ui.instructor.pass_routes import pass_routes  # it imports this module

    path = f"{app_path()}{ROUTE}/{{token}}"
    return [Route(path, sign_in_page, methods=["GET"]), Route(path, sign_in, methods=["POST"]), *pass_routes()]
