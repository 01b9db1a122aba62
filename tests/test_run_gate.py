"""The page-run gate (app_pages/runtime/run_gate.py): a freed slot goes to the run that has waited longest,
a run that lets go queues again behind the others, and an error in a run frees its slot."""

from __future__ import annotations

import threading
import time

import pytest

from app_pages.runtime.run_gate import RunGate, page_runs


def wait_until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def queued(gate: RunGate) -> int:
    return len(gate._waiting)


def start_run(gate: RunGate, name: str, order: list[str], hold: threading.Event | None = None) -> threading.Thread:
    def run() -> None:
        with gate.slot():
            order.append(name)
            if hold is not None:
                hold.wait(5)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_runs_are_served_in_the_order_they_arrive():
    gate, order, first_holds = RunGate(1), [], threading.Event()
    threads = [start_run(gate, "first", order, first_holds)]
    wait_until(lambda: order == ["first"])
    for index, name in enumerate(["second", "third", "fourth"], start=1):
        threads.append(start_run(gate, name, order))
        wait_until(lambda: queued(gate) == index)  # noqa: B023 (waited on here)  # each is waiting before the next arrives
    first_holds.set()
    for thread in threads:
        thread.join(5)
    assert order == ["first", "second", "third", "fourth"]


def test_a_freed_slot_cannot_be_taken_by_a_run_that_arrives_after_the_waiting_ones():
    gate, order, first_holds = RunGate(1), [], threading.Event()
    threads = [start_run(gate, "first", order, first_holds)]
    wait_until(lambda: order == ["first"])
    threads.append(start_run(gate, "waiting", order))
    wait_until(lambda: queued(gate) == 1)
    first_holds.set()
    threads.append(start_run(gate, "late", order))
    for thread in threads:
        thread.join(5)
    assert order == ["first", "waiting", "late"]


def test_a_run_that_lets_go_while_it_waits_queues_again_behind_the_others():
    gate, order = RunGate(1), []
    outside, resumed = threading.Event(), threading.Event()

    def waiting_run() -> None:
        with gate.slot():
            order.append("waiter starts")
            with gate.let_go():
                outside.wait(5)  # e.g. a submission's first look at its grade
            order.append("waiter resumes")
            resumed.set()

    waiter = threading.Thread(target=waiting_run)
    waiter.start()
    wait_until(lambda: order == ["waiter starts"])
    other = start_run(gate, "another student's page", order)  # served while the first one waits
    other.join(5)
    assert order == ["waiter starts", "another student's page"]
    outside.set()
    waiter.join(5)
    assert resumed.is_set() and order[-1] == "waiter resumes"


def test_letting_go_outside_a_slot_changes_nothing():
    gate = RunGate(1)
    with gate.let_go():  # a fragment's rerun holds no slot
        pass
    with gate.slot():
        assert gate._free == 0
    assert gate._free == 1


def test_an_error_in_a_run_frees_its_slot():
    gate = RunGate(1)
    with pytest.raises(RuntimeError):
        with gate.slot():
            raise RuntimeError("a page failed (or Streamlit stopped the run for a rerun)")
    assert gate._free == 1 and queued(gate) == 0


def test_the_number_of_slots_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("POSLAB_PAGE_RUNS", "3")
    assert page_runs()._free == 3
    monkeypatch.setenv("POSLAB_PAGE_RUNS", "none")
    assert page_runs()._free == 1  # not a whole number: the default
