"""A sandboxed child's life: what it inherits from the warm worker, and how it starts and ends.

A child is a fork of the worker, so it inherits the worker's warm-up (the meta device's kernels,
without ``torch._dynamo``) and its heap on huge pages; it is forked ahead of its submission when the
previous grading ends (``WorkerProcess.release``), and each submission still gets a fresh one.
These tests need bubblewrap (skip with the reason locally, fail under CI=true).
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from grader.faults import GraderFault
from grader.sandbox import SubmissionSandbox, WorkerProcess
from grader.sandboxed import child, protocol
from grader.sandboxed.protocol import MessageKind
from grader.settings import GraderSettings
from poslab.config import PROJECT_ROOT
from tests.hostile._support import SANDBOX_SETTINGS, live_processes, require_bwrap

SETTINGS = SANDBOX_SETTINGS


META_PROBE = "import sys\nraise RuntimeError(sorted({'torch._dynamo', 'sympy'} & set(sys.modules)))\n"


def meta_modules_a_child_inherits(worker: WorkerProcess) -> str:
    sandbox = SubmissionSandbox(worker, {"probe.py": META_PROBE}, SETTINGS.timeout)
    try:
        return sandbox.for_exercise(["probe.py"], ["attention"]).load.import_errors["probe.py"]["message"]
    finally:
        sandbox.close()


def test_a_hidden_tests_worker_warms_the_meta_device_and_a_public_tests_worker_does_not(worker):
    """The hidden tests run ops on the meta device, whose first op imports sympy (half a second): their
    children inherit it, without torch._dynamo (``warm_up.spare_dynamo_import``). The public tests never
    do, and their worker starts without it."""
    assert meta_modules_a_child_inherits(worker) == "['sympy']"
    public = WorkerProcess(SETTINGS, isolation="bwrap", preload=("pytest",), meta_kernels=False)
    try:
        assert meta_modules_a_child_inherits(public) == "[]"
    finally:
        public.close()


META_OPS_PROBE = textwrap.dedent("""
    import sys, torch

    def alibi_slopes(n_heads):
        m = torch.empty(2, 5, 8, device="meta")
        half = torch.arange(0, 8, 2, device="meta") / 8
        angles = torch.outer(torch.arange(5, device="meta").float(), 10000.0 ** -half)
        turned = torch.view_as_real(torch.polar(torch.ones_like(angles), angles) * torch.view_as_complex(
            m.reshape(2, 5, 4, 2)))
        scores = torch.softmax(m @ m.transpose(-2, -1) / 8**0.5 + torch.empty(5, 5, device="meta").triu(1), -1)
        mixed = torch.where(m > 0, m, -m).masked_fill(torch.ones(5, 8, dtype=torch.bool, device="meta"), 0.0)
        table = torch.nn.Embedding(6, 8).to("meta")(torch.zeros(3, dtype=torch.long, device="meta"))
        layer = torch.nn.Linear(8, 8).to(torch.float64).to("meta")(m.double())
        buckets = torch.log(m.abs() + 1).floor().long().clamp(max=7) + torch.bucketize(m, torch.empty(3, device="meta"))
        parts = (turned, scores @ m, mixed, table, layer, buckets, torch.cat([m[..., 0::2], m[..., 1::2]], -1).half())
        return torch.tensor([len(parts), "torch._dynamo" in sys.modules])
""")


def test_a_childs_meta_device_ops_import_no_dynamo(worker):
    """The ops a RoPE, ALiBi, T5 or attention submission runs on the meta device go through torch's
    Python kernels; none of them imports torch._dynamo in the child (a second each)."""
    sandbox = SubmissionSandbox(worker, {"probe.py": META_OPS_PROBE}, SETTINGS.timeout)
    try:
        ran, imported = sandbox.for_exercise(["probe.py"], ["alibi_slopes"]).alibi_slopes(1).tolist()
    finally:
        sandbox.close()
    assert (ran, imported) == (7, 0)


HUGE_PAGES_PROBE = (
    "import re\n"
    "raise RuntimeError(re.search(r'AnonHugePages:\\s+(\\d+)', open('/proc/self/smaps_rollup').read()).group(1))\n"
)


def test_a_child_inherits_a_worker_heap_on_huge_pages(worker):
    """A child per submission is a fork of the worker, which copies its page tables: with the heap on
    transparent huge pages they are smaller (``grader.sandbox.isolation.worker_environment``)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled", encoding="ascii") as handle:
            allowed = "[never]" not in handle.read()
    except FileNotFoundError:
        allowed = False
    if not allowed:
        pytest.skip("this kernel gives no process transparent huge pages")
    sandbox = SubmissionSandbox(worker, {"probe.py": HUGE_PAGES_PROBE}, SETTINGS.timeout)
    try:
        kib = sandbox.for_exercise(["probe.py"], ["attention"]).load.import_errors["probe.py"]["message"]
    finally:
        sandbox.close()
    assert int(kib) >= 32 * 1024, f"only {kib} KiB of the child's memory is on huge pages"


# Whether glibc's malloc gives an 8 MiB block a mapping of its own (its default) or takes it from the heap.
OWN_MAPPING_PROBE = textwrap.dedent("""
    import ctypes

    class MallocInfo(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallocInfo
    libc.malloc.restype = ctypes.c_void_p
    mappings = libc.mallinfo2().hblks
    block = libc.malloc(8 << 20)
    own_mapping = libc.mallinfo2().hblks > mappings
    libc.free(ctypes.c_void_p(block))
    raise RuntimeError(own_mapping)
""")


def test_a_child_keeps_freed_memory_on_its_heap(worker):
    """A tensor of a few MiB comes from the heap and goes back to it, not to the kernel: the next one of that
    size faults no fresh pages in (``grader.sandbox.isolation.MALLOC_TUNABLES``)."""
    sandbox = SubmissionSandbox(worker, {"probe.py": OWN_MAPPING_PROBE}, SETTINGS.timeout)
    try:
        own_mapping = sandbox.for_exercise(["probe.py"], ["attention"]).load.import_errors["probe.py"]["message"]
    finally:
        sandbox.close()
    assert own_mapping == "False"


def test_a_judge_keeps_freed_memory_on_its_heap():
    """The same for a judge, set by its preload (``grader.service.judge.keep_freed_memory``); the probe without it
    shows that an 8 MiB block does get a mapping of its own by default."""
    setting = "from grader.service.judge import keep_freed_memory; assert keep_freed_memory()\n"
    results = {}
    for judge in (False, True):
        done = subprocess.run(
            [sys.executable, "-c", (setting if judge else "") + OWN_MAPPING_PROBE],
            capture_output=True,
            text=True,
            cwd=PROJECT_ROOT,
            timeout=60,
        )
        results[judge] = done.stderr.strip().splitlines()[-1]
    assert results == {False: "RuntimeError: True", True: "RuntimeError: False"}


BATCH_PROBE = textwrap.dedent("""
    import os, threading
    from grader.sandbox import SubmissionSandbox, WorkerProcess
    from grader.service.judge import batch_scheduling
    from grader.settings import GraderSettings

    batch_scheduling()
    started_after = []
    thread = threading.Thread(target=lambda: started_after.append(os.sched_getscheduler(0)))
    thread.start()
    thread.join()
    probe = "import os\\nraise RuntimeError(os.sched_getscheduler(0))\\n"
    worker = WorkerProcess(GraderSettings(timeout=3.0))
    sandbox = SubmissionSandbox(worker, {"probe.py": probe}, 3.0)
    try:
        child = sandbox.for_exercise(["probe.py"], ["attention"]).load.import_errors["probe.py"]["message"]
    finally:
        sandbox.close()
        worker.close()
    print(os.sched_getscheduler(0), started_after[0], child)
""")


def test_a_judge_its_threads_and_its_sandbox_children_run_as_batch_work():
    """A woken judge or child waits for its turn instead of preempting the other (``batch_scheduling``)."""
    done = subprocess.run(
        [sys.executable, "-c", BATCH_PROBE], capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(os.SCHED_BATCH)] * 3


MARKING_PROBE = textwrap.dedent("""
    import os, torch

    def alibi_slopes(n_heads):
        seen = getattr(torch, "_left_by_an_earlier_submission", None)
        torch._left_by_an_earlier_submission = os.getuid()
        return torch.tensor([os.getuid(), -1 if seen is None else seen])
""")


def live_uids(uids: range) -> dict[int, int]:
    """pid -> uid of the live processes whose real uid is in ``uids``."""
    return {pid: uid for pid, (uid, _) in live_processes(uids).items()}


def test_each_submission_gets_a_fresh_child_though_the_next_is_forked_ahead(worker):
    """A finished grading's child is ended, and the next forked, while nobody waits
    (``WorkerProcess.release``): the next submission still sees nothing the last one left."""
    answers = []
    for _ in range(3):
        sandbox = SubmissionSandbox(worker, {"probe.py": MARKING_PROBE}, SETTINGS.timeout)
        try:
            answers.append(
                [int(value) for value in sandbox.for_exercise(["probe.py"], ["alibi_slopes"]).alibi_slopes(1)]
            )
        finally:
            sandbox.close()
    assert [seen for _, seen in answers] == [-1, -1, -1], "a submission saw what an earlier one left in torch"
    uids = [uid for uid, _ in answers]
    assert len(set(uids)) == 3
    if os.geteuid() == 0:  # (each child has a uid of its own only when the worker may give one)
        worker.spawn().close()
        worker.reap()  # settles every answer owed: each earlier child has been killed and reaped by now
        assert set(live_uids(range(min(uids), max(uids) + 1)).values()).isdisjoint(uids)


def test_a_worker_that_dies_after_a_release_is_the_next_grading_s_fault_not_its_crash():
    """The worker and the child it forked ahead die together; the next submission's grading ends in a
    ``GraderFault`` (graded again elsewhere), at its spawn or, if the child's end was seen first, at
    its reap (``SubmissionSandbox.fault``, which ``Grader`` raises)."""
    require_bwrap()
    doomed = WorkerProcess(SETTINGS, isolation="bwrap")
    try:
        sandbox = SubmissionSandbox(doomed, {"probe.py": MARKING_PROBE}, SETTINGS.timeout)
        sandbox.for_exercise(["probe.py"], ["alibi_slopes"]).alibi_slopes(1)
        sandbox.close()
        os.killpg(doomed.process.pid, 9)  # bubblewrap; the worker, in a session of its own, dies with it
        doomed.process.wait()
        ended = select.poll()
        ended.register(doomed.control, select.POLLRDHUP)
        assert ended.poll(10_000), "the worker outlived its bubblewrap"
        after = SubmissionSandbox(doomed, {"probe.py": MARKING_PROBE}, SETTINGS.timeout)
        try:
            after.for_exercise(["probe.py"], [])
        except GraderFault as fault:
            seen = fault
        else:
            after.close()
            seen = after.fault
        assert isinstance(seen, GraderFault) and "the grading worker failed" in str(seen)
        assert doomed.next_child is None and doomed.owed == []
    finally:
        doomed.close()


def test_a_child_that_died_while_it_waited_is_replaced_before_the_next_submission(worker):
    if os.geteuid() != 0:
        pytest.skip("the test finds the waiting child by its uid, which only root gives it")
    children = range(worker.first_uid, worker.first_uid + 256)
    worker.spawn().close()
    worker.reap()
    worker.release()  # as after any grading: the next child forked ahead
    deadline = time.monotonic() + 10
    while not (waiting := live_uids(children)) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(waiting) == 1, f"expected one child waiting, found {waiting}"
    for pid in waiting:
        os.kill(pid, 9)
    while live_uids(children) and time.monotonic() < deadline:
        time.sleep(0.01)
    sandbox = SubmissionSandbox(worker, {"probe.py": MARKING_PROBE}, SETTINGS.timeout)
    try:
        student = sandbox.for_exercise(["probe.py"], ["alibi_slopes"])
        uid, _ = student.alibi_slopes(1).tolist()
    finally:
        sandbox.close()
    assert student.crash is None and uid not in waiting.values()


@pytest.mark.parametrize("meta_kernels", [True, False])
def test_a_child_runs_the_warm_up_before_it_says_it_is_ready(monkeypatch, tmp_path, meta_kernels):
    """A child forked ahead warms up while nobody waits (its first ops' copied pages), never once its
    submission has arrived; the meta device's ops only for a worker that warmed them."""
    warmed: list[bool] = []
    monkeypatch.setattr(child, "warm_up", warmed.append)
    ours, theirs = socket.socketpair()
    serving = threading.Thread(target=child.Child(theirs, str(tmp_path), meta_kernels).serve)
    serving.start()
    header, _ = protocol.recv_frame(ours, protocol.Limits(), time.monotonic() + 10)
    assert header["type"] == MessageKind.READY and warmed == [meta_kernels]
    ours.close()
    serving.join(10)
    assert not serving.is_alive() and warmed == [meta_kernels]
