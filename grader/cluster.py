"""The judge's Dask preload by its documented name: ``dask worker ADDRESS --nthreads 1 --preload grader.cluster``.

It is ``grader.service.judge`` (read that); Dask looks up ``dask_setup`` and ``dask_teardown`` on the
module it preloads, so they are named here too.
"""

from grader.service.judge import dask_setup, dask_teardown, load_suite

__all__ = ["dask_setup", "dask_teardown", "load_suite"]
