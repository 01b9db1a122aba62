"""What another user of the machine could reach: the embedded grading cluster, the data folder, the store.

The embedded cluster (``grader.service.embedded``) speaks Dask's mutual TLS with a certificate made
at its start: a local client with no certificate, or over plain TCP, is refused, and the app's own
client (its ``security``) is served. The certificate's files are 0600 in a 0700 folder. The data
folder is created 0700 (an existing one narrowed), and the SQLite store with its ``-wal`` and
``-shm`` files is 0600, whatever the umask.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from grader.service.embedded import EmbeddedCluster
from grader.service.judge import WARM_MODES_ENV
from poslab.store import Store
from tests.conftest import ROOT


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


STRANGER = """
import sys
from distributed import Client
for address in sys.argv[1:]:
    try:
        Client(address, timeout=3).close()
        print("connected", address)
    except Exception as error:
        print("refused", address, type(error).__name__)
"""


def strangers(*addresses: str) -> str:
    """What a local user's client, with no certificate of this cluster, gets at each address."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DASK_")}
    run = [sys.executable, "-c", STRANGER, *addresses]
    return subprocess.run(run, capture_output=True, text=True, timeout=120, env=env, cwd=ROOT).stdout


@pytest.fixture(scope="module", params=[False, True], ids=["scheduler process", "scheduler thread"])
def cluster(request):
    started = EmbeddedCluster(1, {WARM_MODES_ENV: "hidden"}, scheduler_in_process=request.param)
    try:
        started.start_scheduler()  # judges would only cost time here: the scheduler is what clients reach
        yield started
    finally:
        started.close()


def test_a_local_client_without_the_clusters_certificate_is_refused(cluster):
    assert cluster.address.startswith("tls://127.0.0.1:"), cluster.address
    seen = strangers(cluster.address, cluster.address.replace("tls://", "tcp://"))
    assert seen.count("refused") == 2 and "connected" not in seen, seen

    from distributed import Client

    with Client(cluster.address, timeout=30, security=cluster.security, set_as_default=False) as own:
        assert own.scheduler_info()["address"] == cluster.address


def test_the_clusters_certificate_is_readable_by_its_owner_only(cluster):
    folder = cluster.folder / "tls"
    assert mode(cluster.folder) == 0o700 and mode(folder) == 0o700
    files = sorted(folder.iterdir())
    assert [path.name for path in files] == ["ca.pem", "cert.pem", "key.pem"]
    assert {path.name: mode(path) for path in files} == dict.fromkeys(["ca.pem", "cert.pem", "key.pem"], 0o600)


def test_the_data_folder_and_the_store_are_the_owners_only(tmp_path):
    old = os.umask(0o022)  # the usual umask: new files 0644, folders 0755
    try:
        nested = tmp_path / "fresh" / "store.db"  # a folder the store makes itself is owner-only too
        Store(f"sqlite:///{nested}").save_draft("bob", "rope", "x = 1", saved_by="tab")
        assert (mode(nested.parent), mode(nested)) == (0o700, 0o600)
        from poslab.config import private_folder

        data = tmp_path / "data"
        data.mkdir(mode=0o755)
        data.chmod(0o755)
        assert private_folder(data) == data and mode(data) == 0o700  # an existing folder is narrowed
        assert mode(private_folder(tmp_path / "new" / "data")) == 0o700
        database = data / "poslab.db"
        store = Store(f"sqlite:///{database}")
        store.save_draft("ada", "rope", "def apply_rope(): ...", saved_by="tab")
        assert store.draft("ada", "rope") is not None
        written = [database, data / "poslab.db-wal", data / "poslab.db-shm"]
        assert all(path.exists() for path in written), sorted(data.iterdir())
        assert {path.name: mode(path) for path in written} == {path.name: 0o600 for path in written}
    finally:
        os.umask(old)


def test_each_cluster_makes_its_own_certificate_without_importing_dask(tmp_path):
    """The cluster's processes start before the client imports Dask (0.4 s): the certificate comes first."""
    made = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from grader.service.certificates import private_certificates; "
            "[private_certificates(Path(sys.argv[1]) / name) for name in 'ab']; "
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'distributed'))",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "[]"
    first, second = ((tmp_path / name / "key.pem").read_text() for name in "ab")
    assert "PRIVATE KEY" in first and first != second
