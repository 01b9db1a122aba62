"""The sandboxed side: everything that runs inside the sandbox, where a submission's code runs.

The judge (``grader.sandbox``) sends every ``.py`` file of this folder, as source, over the
worker's stdin socket; a small bootstrap serves them as the runner package (``sandbox_runner``). Nothing of the
project is mounted where the worker runs, so these modules import only the standard library,
torch, numpy, pytest and each other (relative imports), never ``poslab`` or the rest of ``grader``.

``worker``          the sandbox worker's main loop: imports torch once, forks one child per
                    submission, kills what a child leaves behind
``child``           the child's serving loop: writes and imports the submission, answers calls
``confinement``     what the child does to itself before any student code runs (session, file
                    descriptors, rlimits, uid, no new privileges, environment, blocked imports)
``exercise_calls``  the exercise-specific calls (``learned.forward``...) and their arguments
``pytest_plugin``   the public tests' outcome as plain data (a student bundle's grading)
``protocol``        the wire format, shared with the judge: framing, limits, and the words of the
                    wire (message kinds, finding and note codes)
``tensor_codec``    tensors as JSON descriptions plus raw bytes, and back, checked

Nothing here is trusted by the judge: it checks every frame a child sends and recomputes every
expected value with its own torch.
"""
