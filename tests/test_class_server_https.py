"""deploy/start-class.sh serves HTTPS unless asked for plain HTTP, and its grading cluster speaks TLS.

``--check`` makes the certificates and haproxy.cfg and has HAProxy check it, starting nothing: by
default the public bind carries a certificate (self-signed, made at this start) and the proxy
tells the apps the scheme; with ``--http`` it does not. The keys are 0600 in a 0700 folder, and
the apps are told to reach their grading cluster over ``tls://``. Needs haproxy and openssl.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, require_system_part

SCRIPT = ROOT / "deploy" / "start-class.sh"


def check(run_dir: Path, *flags: str) -> str:
    require_system_part(shutil.which("haproxy") is not None, "haproxy is not installed (apt-get install haproxy)")
    require_system_part(shutil.which("openssl") is not None, "openssl is not installed (apt-get install openssl)")
    env = os.environ | {"POSLAB_DB_URL": "postgresql+psycopg://nobody@127.0.0.1/none", "POSLAB_RUN_DIR": str(run_dir)}
    done = subprocess.run(
        ["bash", str(SCRIPT), "--check", *flags], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return (run_dir / "haproxy.cfg").read_text()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_https_by_default_with_a_self_signed_certificate(tmp_path: Path):
    config = check(tmp_path / "run")
    [bind] = [line.strip() for line in config.splitlines() if line.strip().startswith("bind ")]
    assert bind.endswith(f"ssl crt {tmp_path / 'run' / 'tls' / 'public.pem'}"), bind
    assert "set-header X-Forwarded-Proto https" in config and "httponly secure" in config
    subject = subprocess.run(
        ["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", str(tmp_path / "run" / "tls" / "public.pem")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "127.0.0.1" in subject, subject
    assert mode(tmp_path / "run") == 0o700 and mode(tmp_path / "run" / "tls") == 0o700
    keys = sorted((tmp_path / "run" / "tls").glob("*.key")) + [tmp_path / "run" / "tls" / "public.pem"]
    assert len(keys) == 3 and {mode(key) for key in keys} == {0o600}, keys


def test_plain_http_only_when_asked(tmp_path: Path):
    config = check(tmp_path / "run", "--http")
    [bind] = [line.strip() for line in config.splitlines() if line.strip().startswith("bind ")]
    assert "ssl" not in bind and "set-header X-Forwarded-Proto http" in config and "secure" not in config


def test_the_grading_cluster_is_reached_over_tls():
    script = SCRIPT.read_text()
    assert 'POSLAB_GRADER_SCHEDULER="tls://127.0.0.1:' in script and "--protocol tls" in script
    assert "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION=True" in script
