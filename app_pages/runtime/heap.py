"""The app process's start-up heap, kept out of the garbage collector's way (once per process).

After every script run Streamlit runs a full garbage collection (``runner.postScriptGC``), so
that one session's cyclic garbage does not pile up between runs. A full collection walks every
tracked object: with torch, pandas, altair and Dask's client imported that is about 310,000
objects and 0.3 s on a course machine, paid after every page run of every student, while the
interpreter lock is held. Under a class, that was five sixths of the server's time (a py-spy
profile, 30 sessions).

The objects the imports create live as long as the process: nothing is gained by walking them
again. ``gc.freeze()`` moves every object tracked now into a permanent generation that
collections skip, so the post-run collection only walks what sessions created since. Streamlit's
own collection stays on: a closed session's cycles are still collected after the next run.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil

from streamlit import runtime

from app_pages.runtime.process import one_per_process

# Imported by the pages and by the grading service's client; loaded here first, so that their
# module-level objects are frozen too.
HEAVY_MODULES = ("distributed", "pandas", "altair", "torch", "sqlalchemy")
LIBRARY_PACKAGES = ("poslab.viz",)


def import_page_libraries() -> None:
    for name in HEAVY_MODULES:
        importlib.import_module(name)
    for package_name in LIBRARY_PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package_name}.{module.name}")


def served() -> bool:
    """Whether a Streamlit server runs this app (not AppTest, whose runtime is a stand-in: freezing
    the heap of a test process would keep whatever the tests before had left, for good)."""
    return runtime.exists() and issubclass(type(runtime.get_instance()), runtime.Runtime)


@one_per_process
def _freeze(_: None) -> int:
    import_page_libraries()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def freeze_start_up_heap() -> int:
    """Import what the pages use, collect once, freeze what is left (once per served process: the
    server's start-up does it, and the first page run if that came first); the objects frozen."""
    if not served():
        return 0
    return _freeze(None)
