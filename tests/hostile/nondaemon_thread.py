"""Hostile: starts a non-daemon thread at import that would keep the interpreter alive forever.

The test appends a correct implementation of every exercise: this one should score full marks,
and the grading must still end.
"""

import threading
import time


def _forever():
    while True:
        time.sleep(1)


threading.Thread(target=_forever, daemon=False).start()
