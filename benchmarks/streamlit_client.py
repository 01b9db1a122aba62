"""A Streamlit session without a browser: Streamlit's own websocket protocol, as the browser speaks it.

    session = await ProtocolSession.open(base_url, student="s001", first_page="rope")
    run = await session.navigate("sinusoidal")      # a click in the sidebar
    run = await session.move_slider()                # the first slider of the page, one step
    await session.close()

What the browser does, and this does too (streamlit 1.67.0's frontend, ``sendRerunBackMsg``):

* an HTTP GET of the page's address first (a reverse proxy sets its sticky cookie there), then a
  websocket to ``/_stcore/stream`` with the subprotocol ``streamlit`` and that cookie;
* the first run is a ``BackMsg.rerun_script`` whose ``ClientState`` carries the address's path as
  ``page_name`` (``rope``) and its query string (``student=...``), with no ``page_script_hash``;
* a click on a page link sends ``page_script_hash`` of the target page (from the ``navigation``
  ForwardMsg) and an empty ``page_name``; a widget change sends the current page's hash and the
  widget's new state in ``widget_states``;
* a run ends with ``ForwardMsg.script_finished``: ``FINISHED_SUCCESSFULLY`` (or a compile error);
  ``FINISHED_EARLY_FOR_RERUN`` means the script called ``st.rerun()`` and another run follows.

A run's time is from sending the BackMsg to receiving the ``script_finished`` that ends it: the
server's whole work for that run, and the bytes' trip over loopback. An ``exception`` element in
the run's deltas is an exception (what the browser draws as a red box); an ``st.error`` box is
counted apart (``error_alerts``), since a page may say a sentence on purpose.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
import urllib.request
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from urllib.parse import urlencode, urlparse

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

FINISHED = ForwardMsg.ScriptFinishedStatus
TEXTS = {
    "markdown": "body",
    "text": "body",
    "alert": "body",
    "progress": "text",
    "page_link": "label",
    "heading": "body",
}  # element kind -> the field holding what it writes
MAIN_ROOT, SIDEBAR_ROOT = 0, 1  # the first index of a delta's path: which container it went to


@dataclass
class Slider:
    widget_id: str
    minimum: float
    maximum: float
    step: float
    value: float

    @property
    def key(self) -> str:
        """The user's key, the last part of Streamlit's widget id (``$$ID-<hash>-<key>``)."""
        return self.widget_id.split("-", 2)[-1] if self.widget_id.startswith("$$ID-") else ""

    def next_value(self) -> float:
        """One step away from the current value, inside the range."""
        up = self.value + self.step
        return up if up <= self.maximum else self.value - self.step


@dataclass
class PageRun:
    page: str
    seconds: float = 0.0
    exceptions: list[str] = field(default_factory=list)
    error_alerts: list[str] = field(default_factory=list)
    elements: int = 0
    reruns: int = 0  # st.rerun() inside the run (FINISHED_EARLY_FOR_RERUN)
    sliders: list[Slider] = field(default_factory=list)
    buttons: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (widget id, fragment id)
    components: dict[str, tuple[str, str]] = field(default_factory=dict)  # component name -> (id, fragment id)
    texts: list[str] = field(default_factory=list)  # what the run wrote: Markdown, text, boxes, bars, links
    problem: str | None = None  # the session could not complete this run (a timeout, a lost connection)
    ended: float = 0.0  # time.perf_counter() when the run ended


def run_sessions(coroutine):
    """``asyncio.run(coroutine)`` in a thread of its own: the caller's thread may already run an event
    loop (a test process that also drives Chromium through Playwright's sync API does)."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="protocol-sessions") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _fetch_page(url: str, timeout: float, cookie: str = "") -> str:
    """GET the page as the browser does first; the Cookie header for the websocket (ours and the
    ones the server or a proxy set)."""
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with opener.open(request, timeout=timeout) as response:
        response.read()
    held = dict(part.strip().split("=", 1) for part in cookie.split(";") if "=" in part)
    held.update({item.name: item.value for item in jar})  # what the server set replaces what was sent
    return "; ".join(f"{name}={value}" for name, value in held.items())


class ProtocolSession:
    """One student's tab: one websocket, one Streamlit session on the server."""

    def __init__(self, base_url: str, student: str, timeout: float, params: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.student = student
        self.timeout = timeout
        self.params = params or {}  # more of the address's query string than ?student=
        self.cookie = ""  # what the websocket sent: the server's and the proxy's cookies
        self.pages: dict[str, str] = {}  # url path -> page_script_hash
        self.page = ""  # url path of the current page
        self.page_hash = ""
        self._socket = None
        self._run: PageRun | None = None
        self._done = asyncio.Event()
        self._reader: asyncio.Task | None = None

    @classmethod
    async def open(
        cls,
        base_url: str,
        student: str,
        first_page: str,
        timeout: float = 120.0,
        params: dict[str, str] | None = None,
        cookie: str = "",
    ) -> tuple[ProtocolSession, PageRun]:
        """Open the address ``/<first_page>?student=<student>`` in a new tab: connect and run it.

        ``cookie``: one the browser already holds (``POSLAB_APP=app2``: the proxy's choice of process)."""
        session = cls(base_url, student, timeout, params)
        started = time.perf_counter()
        session.cookie = cookie = await asyncio.to_thread(
            _fetch_page, f"{session.base_url}/{first_page}?{session.query}", timeout, cookie
        )
        parsed = urlparse(session.base_url)
        scheme = "wss" if parsed.scheme == "https" else "ws"
        headers = {"Cookie": cookie} if cookie else {}
        session._socket = await connect(
            f"{scheme}://{parsed.netloc}{parsed.path}/_stcore/stream",
            subprotocols=["streamlit"],
            additional_headers=headers,
            max_size=None,
            open_timeout=timeout,
            ping_interval=None,
        )
        session._reader = asyncio.create_task(session._read())
        run = await session._rerun(first_page, page_name=first_page, page_hash="", started=started)
        return session, run

    @property
    def query(self) -> str:
        """``?student=<name>`` (typed-name mode; none for "": a session signed in by its cookie) and ``params``."""
        return urlencode({**({"student": self.student} if self.student else {}), **self.params})

    async def navigate(self, page: str) -> PageRun:
        """A click on the page's link in the sidebar."""
        if page not in self.pages:
            return PageRun(page, problem=f"no page {page!r} in the app's navigation ({', '.join(self.pages)})")
        return await self._rerun(page, page_name="", page_hash=self.pages[page])

    async def move_slider(self, last_run: PageRun) -> PageRun:
        """Move the first slider of the page's main area (not a quick check) by one step."""
        slider = next((item for item in last_run.sliders if not item.key.startswith("qc-")), None)
        if slider is None:
            return PageRun(self.page, problem="no slider on this page to move")
        state = WidgetState(id=slider.widget_id)
        state.double_array_value.data.append(slider.next_value())
        return await self._rerun(
            self.page,
            page_name="",
            page_hash=self.page_hash,
            widgets=[state],
            label=f"{self.page} (slider {slider.key})",
        )

    async def click(self, last_run: PageRun, label: str) -> PageRun:
        """A click on the button labelled ``label`` (in its fragment, as the browser sends it)."""
        if label not in last_run.buttons:
            return PageRun(self.page, problem=f"no button {label!r} (buttons: {', '.join(last_run.buttons)})")
        widget_id, fragment_id = last_run.buttons[label]
        return await self._rerun(
            self.page,
            page_name="",
            page_hash=self.page_hash,
            widgets=[WidgetState(id=widget_id, trigger_value=True)],
            fragment_id=fragment_id,
            label=f"{self.page} ({label})",
        )

    async def send_component(self, last_run: PageRun, name_part: str, value: dict) -> PageRun:
        """A custom component (e.g. the code editor) sends ``value`` (JSON), in its fragment."""
        found = next((key for key in last_run.components if name_part in key), None)
        if found is None:
            return PageRun(self.page, problem=f"no component {name_part!r} ({', '.join(last_run.components)})")
        widget_id, fragment_id = last_run.components[found]
        return await self._rerun(
            self.page,
            page_name="",
            page_hash=self.page_hash,
            widgets=[WidgetState(id=widget_id, json_value=json.dumps(value))],
            fragment_id=fragment_id,
            label=f"{self.page} ({name_part})",
        )

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            self._reader.cancel()

    async def _rerun(
        self,
        page: str,
        page_name: str,
        page_hash: str,
        widgets: list[WidgetState] = (),
        started: float | None = None,
        label: str | None = None,
        fragment_id: str = "",
    ) -> PageRun:
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query
        state.page_name = page_name
        state.page_script_hash = page_hash
        state.fragment_id = fragment_id
        state.widget_states.widgets.extend(widgets)
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-US"
        state.context_info.url = f"{self.base_url}/{page}?{self.query}"
        self._run, self._done = PageRun(label or page), asyncio.Event()
        start = time.perf_counter() if started is None else started
        try:
            await self._socket.send(message.SerializeToString())
            await asyncio.wait_for(self._done.wait(), self.timeout)
        except (TimeoutError, OSError, ConnectionError) as error:
            self._run.problem = f"{type(error).__name__}: no end of the run within {self.timeout:g} s"
        except Exception as error:  # noqa: BLE001 - a closed websocket: said in the run's figures
            self._run.problem = f"{type(error).__name__}: {error}"
        self._run.ended = time.perf_counter()
        self._run.seconds = self._run.ended - start
        self.page = page
        return self._run

    async def _read(self) -> None:
        try:
            async for frame in self._socket:
                message = ForwardMsg()
                message.ParseFromString(frame)
                self._handle(message)
        except Exception as error:  # noqa: BLE001 - the connection ended: the waiting run says so
            if self._run is not None and not self._done.is_set():
                self._run.problem = f"connection lost: {type(error).__name__}"
                self._done.set()

    def _handle(self, message: ForwardMsg) -> None:
        kind = message.WhichOneof("type")
        run = self._run
        if kind == "navigation":
            self.pages = {page.url_pathname: page.page_script_hash for page in message.navigation.app_pages}
            self.page_hash = message.navigation.page_script_hash
        elif kind == "new_session":
            self.page_hash = message.new_session.page_script_hash or self.page_hash
        elif kind == "page_not_found" and run is not None:
            run.exceptions.append(f"page not found: {message.page_not_found.page_name!r}")
        elif kind == "delta" and run is not None and message.delta.WhichOneof("type") == "new_element":
            self._element(run, message)
        elif kind == "script_finished" and run is not None:
            if message.script_finished == FINISHED.FINISHED_EARLY_FOR_RERUN:
                run.reruns += 1
            elif message.script_finished in (
                FINISHED.FINISHED_SUCCESSFULLY,
                FINISHED.FINISHED_WITH_COMPILE_ERROR,
                FINISHED.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
            ):
                if message.script_finished == FINISHED.FINISHED_WITH_COMPILE_ERROR:
                    run.exceptions.append("the script did not compile")
                self._done.set()

    @staticmethod
    def _element(run: PageRun, message: ForwardMsg) -> None:
        element = message.delta.new_element
        run.elements += 1
        kind = element.WhichOneof("type")
        written = TEXTS.get(kind)
        if written is not None:
            run.texts.append(getattr(getattr(element, kind), written))
        if kind == "button":
            run.buttons[element.button.label] = (element.button.id, message.delta.fragment_id)
        elif kind == "component_instance":
            component = element.component_instance
            run.components[component.component_name] = (component.id, message.delta.fragment_id)
        if kind == "exception":
            run.exceptions.append(f"{element.exception.type}: {element.exception.message}"[:300])
        elif kind == "alert" and element.alert.format == Alert.ERROR:
            run.error_alerts.append(element.alert.body[:300])
        elif kind == "slider" and not element.slider.options:
            in_main = list(message.metadata.delta_path[:1]) == [MAIN_ROOT]
            if in_main and not element.slider.disabled:
                values = list(element.slider.value) or list(element.slider.default)
                run.sliders.append(
                    Slider(element.slider.id, element.slider.min, element.slider.max, element.slider.step, values[0])
                )
