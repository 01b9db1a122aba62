"""The judge's Dask preload by its documented name: ``dask worker ADDRESS --nthreads 1 --preload grader.cluster``.

It is ``grader.service.judge`` (read that); Dask looks up ``dask_setup`` and ``dask_teardown`` on the
module it preloads, so they are named here too. Importing this module imports what judging needs
(torch, the grader), which ``grader.service.judge`` leaves to its warm-up so that the service's
clients, which import it too, never pay for torch: Dask imports a preload while it builds the worker,
before the worker waits for its scheduler, so a judge started beside its scheduler warms meanwhile.
"""

import gc

gc.disable()  # until the warm-up ends (dask_setup): collections during the imports cost a judge 0.13 s of CPU

import grader.api  # noqa: E402, F401 - torch and the grader, imported as the preload is loaded
from grader.service.judge import dask_setup, dask_teardown, load_suite  # noqa: E402

__all__ = ["dask_setup", "dask_teardown", "load_suite"]
