"""The app's routes of the Instructor page's pass (``poslab.instructor_pass``).

``POST <app>/instructor-pass`` with a ticket as its body sets the pass cookie (HttpOnly,
SameSite=Strict, a browser-session cookie); ``POST <app>/instructor-pass/end`` deletes it. Both
take requests from this app's own pages only (their ``Origin``), like the sign-in link's POST.
"""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from app_pages.runtime.server import _https, _private, _same_origin, app_path
from app_pages.ui.instructor.lock import instructor_password
from poslab.config import Settings
from poslab.instructor_pass import MAX_CHARS, PASS_COOKIE, PASS_ROUTE, sign, valid


def _refused(status: int, text: str) -> Response:
    return _private(PlainTextResponse(text, status_code=status))


async def give_pass(request: Request) -> Response:
    if not _same_origin(request):
        return _refused(403, "Only the app's own Instructor page can ask for a pass.")
    ticket = (await request.body())[: MAX_CHARS + 1].decode("ascii", "replace")
    password = instructor_password()
    now = datetime.now(UTC)
    if password is None or not valid(ticket, "ticket", password, now):
        return _refused(403, "That ticket is not valid (it lasts a minute): unlock the page again.")
    response = _private(PlainTextResponse("kept unlocked for this browser session"))
    response.set_cookie(
        PASS_COOKIE,
        sign("pass", password, now),
        path=app_path(),
        httponly=True,
        samesite="strict",
        secure=_https(request, Settings.from_env()),
    )
    return response


async def end_pass(request: Request) -> Response:
    if not _same_origin(request):
        return _refused(403, "Only the app's own Instructor page can end its pass.")
    response = _private(PlainTextResponse("locked"))
    response.delete_cookie(PASS_COOKIE, path=app_path(), httponly=True, samesite="strict")
    return response


def pass_routes() -> list[Route]:
    path = f"{app_path()}{PASS_ROUTE}"
    return [Route(path, give_pass, methods=["POST"]), Route(f"{path}/end", end_pass, methods=["POST"])]
