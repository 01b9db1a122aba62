"""What one app process shares: one value per key, made once, for the server's start-up, its HTTP
routes and every session's script runs alike.

``st.cache_resource`` does this inside script runs, but the server's start-up (app.py's lifespan)
and its routes run outside any: there it warns on every call, and a value made there would not be
the one the pages get. ``one_per_process`` is a plain, thread-safe memo: the first call with a key
makes the value (a failure is not kept: the next call tries again), every later call returns it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class OnePerProcess(Generic[K, V]):
    def __init__(self, make: Callable[[K], V]) -> None:
        self._make = make
        self._made: dict[K, V] = {}
        self._lock = threading.Lock()
        self.__doc__ = make.__doc__

    def __call__(self, key: K) -> V:
        try:
            return self._made[key]
        except KeyError:
            pass
        with self._lock:  # two threads asking at once make it once
            if key not in self._made:
                self._made[key] = self._make(key)
            return self._made[key]

    def clear(self) -> None:
        """Forget every value made (a test that changes the settings a value was made from)."""
        with self._lock:
            self._made.clear()

    def made(self, key: K) -> V | None:
        """The value if it was made, without making it."""
        return self._made.get(key)


def one_per_process(make: Callable[[K], V]) -> OnePerProcess[K, V]:
    return OnePerProcess(make)
