"""The lab's live quick run in a child process: its results, its time left, its slots, its failures,
and the race it closes: another session's torch work is not blocked while a quick run goes."""

from __future__ import annotations

import threading
import time

import pytest
import torch

from poslab.experiments import lab_runner
from poslab.experiments.config import FULL, QUICK, LiveQuickRun
from poslab.experiments.extrapolation import RunProgress
from poslab.experiments.lab_runner import FinishedRun, LabProgress, Pace, QuickRunFailed, QuickRuns
from poslab.fit.learned_table import fit_learned_table
from poslab.viz.extrapolation import quick_estimate

TINY_RUN = dict(steps=2, encodings=("learned",))  # tested at the training length only: cheap


def test_time_left_comes_from_the_runs_own_pace():
    pace = Pace(started=100.0)
    assert pace.update(RunProgress(0.1, "m", 0, 5), now=101.0) == "timing the first model"
    # One model in 10 s: four to go is 40 s, less the 2 s already spent on the second.
    assert pace.update(RunProgress(0.2, "m", 1, 5), now=110.0) == "about 40 s left at this run's pace"
    assert pace.update(RunProgress(0.3, "m", 1, 5), now=112.0) == "about 38 s left at this run's pace"
    # Two models in 30 s: 15 s each, three to go.
    assert pace.update(RunProgress(0.4, "m", 2, 5), now=130.0) == "about 45 s left at this run's pace"
    assert pace.update(RunProgress(1.0, "m", 5, 5), now=160.0) == "almost done"


def test_the_estimate_before_a_run_is_the_last_run_on_this_server():
    assert "No quick run has finished on this server yet" in quick_estimate(None, 0, 2)
    last = FinishedRun(wall_s=27.4, finished_at=1_000.0, runs_at_once=2)
    text = quick_estimate(last, running=1, slots=2, now=1_000.0 + 185)
    assert text.startswith("The last quick run on this server took 27 s, with 2 runs at once (3 min ago).")
    assert "1 quick run is going now; at most 2 at a time" in text


def test_a_failed_run_frees_its_slot_and_a_run_that_finds_it_taken_waits_then_gives_results():
    """One slot, three child processes: a failed run says why and frees its slot; then a run that finds
    the slot taken waits and says so, and gives the quick mode's results and its time."""
    runs = QuickRuns(slots=1)
    with pytest.raises(QuickRunFailed, match="exit code 2.*invalid choice: 'xpos'"):
        runs.run(0, lambda progress: None, steps=2, encodings=("xpos",))
    assert runs.running == 0 and runs.last is None, "a failed run kept its slot or counted as finished"
    first_started, first, seen = threading.Event(), {}, []

    def first_run() -> None:
        first["results"] = runs.run(1, lambda progress: first_started.set(), **TINY_RUN)

    other = threading.Thread(target=first_run)
    other.start()
    assert first_started.wait(30), "the run after a failed one never started: the slot stayed taken"
    results = runs.run(4, seen.append, **TINY_RUN)
    other.join(60)
    assert first["results"].measurements, "the run after a failed one gave no results"
    assert seen[0].message.startswith("waiting for a free slot: 1 quick run(s) at a time on this server")
    assert {m.encoding for m in results.measurements} == {"learned"} and {m.seed for m in results.measurements} == {4}
    assert results.probes and results.record.mode == "quick" and results.record.config["steps"] == 2
    # The child ran the command line's real quick mode: its sizes, not the full run's.
    assert results.record.config["probe_trials"] == QUICK.probe_trials != FULL.probe_trials
    messages = [p.message for p in seen if not p.message.startswith("waiting for a free slot")]
    assert messages[0] == "starting a process for the run"
    assert any("(timing the first model)" in m for m in messages)
    assert messages[-1].startswith("learned, seed 4: done") and seen[-1].fraction == 1.0
    assert runs.last is not None and runs.last.wall_s > 0 and runs.running == 0


def test_the_server_setting_is_read_checked_and_given_to_the_command_line(tmp_path):
    live = LiveQuickRun.from_env({"POSLAB_LAB_QUICK_STEPS": " 12 ", "POSLAB_LAB_QUICK_ENCODINGS": "learned, alibi"})
    assert live == LiveQuickRun(12, ("learned", "alibi")) and live.models == 2
    assert LiveQuickRun.from_env({}) == LiveQuickRun() and LiveQuickRun().models == 5 and not LiveQuickRun().shortened()
    assert "12 training steps and only learned, alibi" in live.shortened()
    for environ, message in [
        ({"POSLAB_LAB_QUICK_STEPS": "0"}, "POSLAB_LAB_QUICK_STEPS must be a whole number of at least 1, got '0'"),
        ({"POSLAB_LAB_QUICK_STEPS": "ten"}, "got 'ten'"),
        ({"POSLAB_LAB_QUICK_ENCODINGS": "rope xpos"}, "names unknown encodings xpos; known: none, sinusoidal"),
    ]:
        with pytest.raises(ValueError, match=message):
            LiveQuickRun.from_env(environ)
    runs = QuickRuns(slots=1, live=live)
    command = runs.command(tmp_path / "q.csv", 0, 12, live.encodings)
    assert command[-5:] == ["--steps", "12", "--encodings", "learned", "alibi"] and "--quick" in command
    default = QuickRuns(slots=1).command(tmp_path / "q.csv", 0, None, ())
    assert "--steps" not in default and "--encodings" not in default  # the quick mode's own, as the CLI's


def test_the_child_is_stopped_when_the_session_goes_away(monkeypatch):
    children = []
    real_popen = lab_runner.subprocess.Popen

    def recording_popen(*args, **kwargs):
        children.append(real_popen(*args, **kwargs))
        return children[-1]

    monkeypatch.setattr(lab_runner.subprocess, "Popen", recording_popen)

    def leave(progress: LabProgress) -> None:  # Streamlit raises in the script thread like this on a rerun
        if progress.fraction > 0:
            raise KeyboardInterrupt("the session went away")

    with pytest.raises(KeyboardInterrupt):
        QuickRuns(slots=1).run(0, leave)
    assert len(children) == 1 and children[0].poll() is not None  # ended, not left training


def test_a_second_session_is_not_blocked_while_a_quick_run_goes():
    """Session A runs the lab's quick mode (learned: 40 steps, seconds of training, then the quick mode's
    testing at the one length it can run); while it trains, session B fits the learned table, which takes torch's
    thread setting (``poslab.threads``). B must finish long before A does: if A held that setting's lock
    through its run, B would wait for A's whole run. torch's setting in this process is the same afterwards."""
    runs = QuickRuns(slots=1)
    before = torch.get_num_threads()
    training_started, during_a, a_done = threading.Event(), [], {}

    def on_progress(progress: LabProgress) -> None:
        if not training_started.is_set():
            during_a.append(torch.get_num_threads())
        if progress.fraction > 0:
            training_started.set()

    def session_a() -> None:
        a_done["results"] = runs.run(0, on_progress, steps=40, encodings=("learned",))
        a_done["at"] = time.monotonic()

    a = threading.Thread(target=session_a)
    a.start()
    try:
        assert training_started.wait(60), "the quick run never started training"
        b_started = time.monotonic()
        fit = fit_learned_table()
        b_finished = time.monotonic()
    finally:
        a.join(300)
    assert fit.losses and "results" in a_done
    b_took, a_left = b_finished - b_started, a_done["at"] - b_started
    assert b_finished < a_done["at"], f"B ended {b_finished - a_done['at']:.1f} s after A: it waited for the run"
    assert b_took < 0.5 * a_left, f"B took {b_took:.1f} s while A had {a_left:.1f} s to go"
    assert torch.get_num_threads() == before and set(during_a) == {before}
