"""The judge's side of the sandbox: start a worker, open one child per submission, talk to it.

The other side, the code that runs inside the sandbox, is ``grader.sandboxed``; the two share only
the wire protocol (``grader.sandboxed.protocol``). What each side guards (see also grader/README.md):

* Student code never runs in the judging process. It runs in a child forked by a worker
  process; replies come back as JSON headers plus raw tensor bytes, checked here field by field
  (``replies``) before any tensor is built. Nothing is unpickled; exit codes, stdout and files
  of the child count for nothing.
* With bubblewrap (``Isolation.BWRAP``) the worker runs with no network, a read-only view
  of /usr and of the Python installation only (not the project), a private /tmp, its own PID
  namespace, and dies with the judge. Each child runs as a uid of its own with rlimits on
  memory, CPU time, processes, file size and open files; after each exercise the worker kills
  every process left in its namespace (a grandchild that called ``setsid()`` included).
* The fallback (``Isolation.FALLBACK``) is a plain subprocess with a scrubbed environment
  and an empty working folder; children get the same rlimits and (as root) their own uid, and
  are killed by uid. It does not hide the file system: a child can read whatever its uid may.
* Inside, the child confines itself before any student code runs
  (``grader.sandboxed.confinement``), and the worker kills whatever a child leaves behind
  (``grader.sandboxed.worker``).

Modules, one per part of the judge's work:

``isolation``       the bubblewrap command line, whether bubblewrap works here, the fallback
``worker_process``  the warm worker: started with ``subprocess``, sent ``grader/sandboxed/`` as source
``child_session``   the judge's end of one child: its time budget, its first crash kept
``session``         one submission's child: import, calls (``SandboxStudent``), a fresh child after a crash
``replies``         checking what a child sends back before anything is built from it
``public_tests``    a student bundle's public tests, run with pytest inside one child
"""

from grader.sandbox.child_session import ChildSession
from grader.sandbox.isolation import bwrap_problem, choose_isolation
from grader.sandbox.public_tests import PublicReport, run_public_tests
from grader.sandbox.replies import JudgeEncoder, decode_reply
from grader.sandbox.session import LoadReport, SandboxStudent, SubmissionSandbox
from grader.sandbox.worker_process import GraderFault, WorkerProcess

__all__ = [
    "ChildSession",
    "GraderFault",
    "JudgeEncoder",
    "LoadReport",
    "PublicReport",
    "SandboxStudent",
    "SubmissionSandbox",
    "WorkerProcess",
    "bwrap_problem",
    "choose_isolation",
    "decode_reply",
    "run_public_tests",
]
