"""Time every page of the app in one warm process: first render, then a rerun after a widget change.

    python benchmarks/bench_pages.py [--repeats 3] [--strict]

The pages come from the lesson registry (plus Home), so new lessons are measured without editing
this file. Each page is opened through the router (app.py) with Streamlit's AppTest, which runs the
script in-process: the times are script time (router + sidebar + page), without a browser or the
network. "First render" is the first visit in this process, with the page's st.cache_data entries
still empty; "rerun" changes the page's first main widget (a toggle, slider, select box, ...; never
a quick check) and is the median over ``--repeats`` changes. Targets: first render < 1 s, rerun
< 0.3 s. ``--strict`` exits with status 1 when a page misses a target or raises. The CPU seconds the
process spent on the first render are printed beside it: on a shared, loaded machine the wall-clock
time can be several times the CPU time, and the CPU time says what the page itself costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("POSLAB_DATA_DIR", tempfile.mkdtemp(prefix="poslab-bench-"))  # never the real store

from streamlit.testing.v1 import AppTest  # noqa: E402

from poslab.lessons import all_lessons  # noqa: E402

APP = str(ROOT / "app.py")
FIRST_RENDER_TARGET = 1.0  # seconds
RERUN_TARGET = 0.3
# Widget kinds worth changing, in order of preference.
WIDGET_KINDS = (
    "toggle",
    "checkbox",
    "slider",
    "select_slider",
    "number_input",
    "segmented_control",
    "pills",
    "selectbox",
    "radio",
)


@dataclass(frozen=True)
class PageTiming:
    page: str
    first_render: float
    rerun: float | None
    widget: str
    error: str | None = None
    first_render_cpu: float = 0.0  # CPU seconds of this process during the first render

    @property
    def meets_targets(self) -> bool:
        return (
            self.error is None
            and self.first_render < FIRST_RENDER_TARGET
            and (self.rerun is None or self.rerun < RERUN_TARGET)
        )


def timed_run(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    return time.perf_counter() - start


def cpu_timed_run(at: AppTest) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of one run; AppTest runs the script in this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    at.run()
    return time.perf_counter() - wall, time.process_time() - cpu


def _option_value(widget, label: str):
    """The original value behind a displayed option label, if a plain guess formats back to it."""
    for guess in (label, label.replace(",", "")):
        for cast in (str, int, float):
            try:
                candidate = cast(guess)
                if str(widget.format_func(candidate)) == label:
                    return candidate
            except (ValueError, TypeError, KeyError):
                continue
    return None


def new_value(widget):
    """A value different from the widget's current one, or None when the bench cannot pick one."""
    kind = widget.type
    if kind in ("toggle", "checkbox"):
        return not widget.value
    if kind == "slider":
        return widget.min if widget.value != widget.min else widget.max
    if kind == "number_input":
        step = widget.step or 1
        upper = widget.max if widget.max is not None else widget.value + step
        return widget.value + step if widget.value + step <= upper else widget.value - step
    for label in getattr(widget, "options", []):
        value = _option_value(widget, label)
        if value is not None and value != widget.value:
            return value
    return None


def widget_change(at: AppTest):
    """(kind, key, value): the first page-body widget (not a quick check, not the sidebar) we can change."""
    in_sidebar = {widget.key for kind in WIDGET_KINDS for widget in getattr(at.sidebar, kind)}
    for kind in WIDGET_KINDS:
        for widget in getattr(at, kind):
            if not widget.key or widget.key.startswith("qc-") or widget.key in in_sidebar or widget.disabled:
                continue
            value = new_value(widget)
            if value is not None:
                return kind, widget.key, value
    return None


def measure(page_path: str, repeats: int) -> PageTiming:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    if page_path != "app_pages/home.py":
        at.switch_page(page_path)
    first, first_cpu = cpu_timed_run(at)
    if at.exception:
        return PageTiming(page_path, first, None, "-", at.exception[0].message.splitlines()[0][:80], first_cpu)
    reruns, label = [], "(no widget the bench can change)"
    for _ in range(repeats):
        plan = widget_change(at)
        if plan is None:
            break
        kind, key, value = plan
        label = f"{kind} {key!r}"
        getattr(at, kind)(key=key).set_value(value)
        reruns.append(timed_run(at))
        if at.exception:
            return PageTiming(
                page_path,
                first,
                statistics.median(reruns),
                label,
                at.exception[0].message.splitlines()[0][:80],
                first_cpu,
            )
    return PageTiming(page_path, first, statistics.median(reruns) if reruns else None, label, None, first_cpu)


def pages() -> list[str]:
    return ["app_pages/home.py", *(lesson.page_path for lesson in all_lessons())]


def warm_up() -> float:
    """Import everything the app imports (torch, altair, the store) before measuring anything."""
    start = time.perf_counter()
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    import poslab.encodings  # noqa: F401  (torch)
    import poslab.viz.common  # noqa: F401  (altair, pandas)

    return time.perf_counter() - start


def report(timings: list[PageTiming], warm: float) -> str:
    lines = [
        f"warm-up (imports, router): {warm:.2f} s",
        f"{'page':32} {'first render':>12} {'(CPU)':>8} {'rerun':>8}  ok  widget changed / error",
    ]
    for timing in timings:
        rerun = "-" if timing.rerun is None else f"{timing.rerun:.3f}"
        flag = "yes" if timing.meets_targets else "NO"
        lines.append(
            f"{timing.page:32} {timing.first_render:>10.3f} s {timing.first_render_cpu:>6.3f} s {rerun:>6} s  {flag:3} "
            f"{timing.error or timing.widget}"
        )
    lines.append(
        f"targets: first render < {FIRST_RENDER_TARGET} s, rerun < {RERUN_TARGET} s "
        f"(script time in AppTest, this machine's load included)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="widget changes per page (median reported)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a page misses a target")
    parser.add_argument("--only", nargs="*", help="page paths to measure (default: all)")
    args = parser.parse_args(argv)
    warm = warm_up()
    timings = [measure(path, args.repeats) for path in (args.only or pages())]
    print(report(timings, warm))
    return 1 if args.strict and not all(timing.meets_targets for timing in timings) else 0


if __name__ == "__main__":
    sys.exit(main())
