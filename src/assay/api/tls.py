"""``assay serve --tls``: a self-signed certificate made at first start under ``$ASSAY_HOME/tls``
(for localhost, 127.0.0.1, ::1 and the host served on), kept and reused afterwards. azure-core
refuses to send bearer tokens over plain http, so Foundry's SDK needs https; clients trust the
certificate through ``SSL_CERT_FILE`` (openai) and ``REQUESTS_CA_BUNDLE`` (azure-core)."""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path

from assay.config.settings import settings
from assay.errors import ConfigError

VALID_DAYS = 825  # the longest validity clients accept for a server certificate


def tls_home() -> Path:
    return settings().home / "tls"


def self_signed(host: str, directory: Path | None = None) -> tuple[Path, Path]:
    """(certificate, key) under ``directory``: made now if missing, or if they do not name ``host``."""
    directory = directory or tls_home()
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    names = _names(host)
    if cert_path.exists() and key_path.exists() and _covers(cert_path, names):
        return cert_path, key_path
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "assay local server")])
    now = datetime.datetime.now(datetime.UTC)
    alternatives = [x509.IPAddress(ipaddress.ip_address(n)) if _is_ip(n) else x509.DNSName(n) for n in names]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    key_bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    descriptor = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key_bytes)
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def given(certfile: Path | None, keyfile: Path | None) -> tuple[Path, Path]:
    if certfile is None or keyfile is None:
        raise ConfigError("--certfile and --keyfile go together", hint="give both, or use --tls for a self-signed one")
    return certfile, keyfile


def _names(host: str) -> list[str]:
    names = ["localhost", "127.0.0.1", "::1"]
    if host not in names and host not in ("0.0.0.0", "::"):
        names.append(host)
    return names


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _covers(cert_path: Path, names: list[str]) -> bool:
    from cryptography import x509

    try:
        certificate = x509.load_pem_x509_certificate(cert_path.read_bytes())
        alternatives = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return False
    have = {str(v) for v in alternatives.get_values_for_type(x509.DNSName)}
    have |= {str(v) for v in alternatives.get_values_for_type(x509.IPAddress)}
    expires = certificate.not_valid_after_utc
    return set(names) <= have and expires > datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)
