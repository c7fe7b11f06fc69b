"""A throw-away CA and a server certificate for 127.0.0.1, made with ``cryptography``."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class TlsFiles:
    ca: Path
    cert: Path
    key: Path


def make_tls(directory: Path) -> TlsFiles:
    """Write ``ca.crt``, ``server.crt`` and ``server.key`` (EC P-256, valid one day)."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kvtrace-test-ca")])
    ca_cert = _builder(ca_name, ca_name, ca_key.public_key(), ca_key.public_key())
    ca_cert = ca_cert.add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
    ca_cert = ca_cert.add_extension(_usage(ca=True), critical=True)
    ca = ca_cert.sign(ca_key, hashes.SHA256())

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    cert = _builder(name, ca_name, key.public_key(), ca_key.public_key())
    cert = cert.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    cert = cert.add_extension(_usage(ca=False), critical=True)
    cert = cert.add_extension(
        x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
    )
    cert = cert.add_extension(
        x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
        ),
        critical=False,
    )
    server = cert.sign(ca_key, hashes.SHA256())

    files = TlsFiles(directory / "ca.crt", directory / "server.crt", directory / "server.key")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


def _builder(subject, issuer, public_key, issuer_key) -> x509.CertificateBuilder:  # type: ignore[no-untyped-def]
    now = datetime.datetime.now(datetime.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key), critical=False
        )
    )


def _usage(ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )
