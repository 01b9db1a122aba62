"""The embedded cluster's TLS: one self-signed certificate that every role presents and trusts.

Made at each cluster's start with ``cryptography`` alone, owner-only on disk; the client's
``distributed.Security`` is built from the files only when asked for, so the scheduler and the
judges can start before this process imports Dask.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from poslab.config import private_folder, write_private

CERTIFICATE_NAME = "poslab-grader"  # Dask checks the chain, not the name: the peer's address is 127.0.0.1
CERTIFICATE_LIFETIME = datetime.timedelta(days=365)


@dataclass(frozen=True)
class ClusterCertificates:
    """The certificate every role of an embedded cluster presents and trusts, with its key: owner-only files."""

    ca_file: Path
    cert_file: Path
    key_file: Path

    def options(self) -> list[str]:
        """The scheduler's and judges' command-line options."""
        return ["--tls-ca-file", str(self.ca_file), "--tls-cert", str(self.cert_file), "--tls-key", str(self.key_file)]

    def security(self, role: Literal["client", "scheduler"] = "client") -> Any:
        """The ``distributed.Security`` of a ``client`` or a ``scheduler`` (imports Dask: the cluster may start first)."""
        from distributed.security import Security

        return Security(
            require_encryption=True,
            tls_ca_file=str(self.ca_file),
            **{f"tls_{role}_cert": str(self.cert_file), f"tls_{role}_key": str(self.key_file)},
        )


def private_certificates(folder: Path) -> ClusterCertificates:
    """A new self-signed certificate (ECDSA P-256) and its key, written owner-only into ``folder``.

    Made with ``cryptography`` alone: importing Dask for its ``Security.temporary()`` and an RSA key
    took 0.6 s in which nothing else could start, one core idle."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CERTIFICATE_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + CERTIFICATE_LIFETIME)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(CERTIFICATE_NAME)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_text = certificate.public_bytes(serialization.Encoding.PEM).decode()
    key_text = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    private_folder(folder)
    return ClusterCertificates(
        write_private(folder / "ca.pem", cert_text),
        write_private(folder / "cert.pem", cert_text),
        write_private(folder / "key.pem", key_text),
    )
