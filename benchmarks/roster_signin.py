"""Students signed in as a class with a roster signs in: a roster file, their links, their cookies.

    roster = write_roster(folder / "roster.csv", ["s000", "s001"])     # s000@class.test, ...
    tokens = Store(db_url).issue_links(keys, timedelta(days=1))       # after the app imported it
    cookie = sign_in(base_url, tokens["s000@class.test"])              # the browser's sign-in, as a Cookie header

``sign_in`` does what a browser does with a personal link: GET ``/signin/<token>`` (the page that
names the student), then POST it from that page (its ``Origin``), and keeps the ``poslab_signin``
cookie the answer sets (a 303 to the app). A session then connects with that cookie and no
``?student=``.
"""

from __future__ import annotations

import csv
import urllib.error
import urllib.request
from collections.abc import Iterable
from http.cookies import SimpleCookie
from pathlib import Path

from poslab.signin import COOKIE, link_url

DOMAIN = "class.test"


def email(student: str) -> str:
    return f"{student}@{DOMAIN}"


def write_roster(path: Path, students: Iterable[str]) -> Path:
    """A plain roster (``name,email``) of ``students``, keyed by ``<student>@class.test``."""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["name", "email"])
        writer.writerows([student, email(student)] for student in students)
    return path


class _Keep303(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the 303 and its Set-Cookie are the answer


def sign_in(base_url: str, token: str, timeout: float = 60.0) -> str:
    """The ``Cookie`` header of a browser signed in by this link; RuntimeError if it signs nobody in."""
    url = link_url(base_url, token)
    with urllib.request.urlopen(url, timeout=timeout) as page:
        page.read()
    request = urllib.request.Request(url, method="POST", headers={"Origin": base_url.rstrip("/")})
    try:
        urllib.request.build_opener(_Keep303).open(request, timeout=timeout)
    except urllib.error.HTTPError as answer:
        jar = SimpleCookie()
        for header in answer.headers.get_all("Set-Cookie") or ():  # a proxy may set its own beside ours
            jar.load(header)
        if answer.code == 303 and COOKIE in jar:
            return f"{COOKIE}={jar[COOKIE].value}"
        raise RuntimeError(f"the link signed nobody in: {answer.code} {answer.headers.get('Location')}") from None
    raise RuntimeError("the link's page did not redirect to the app")
