"""TLS for a cluster's SSL and SASL_SSL listeners, with Python's ``ssl`` module.

``ClusterTls.start(settings)`` sets a cluster's TLS up at start, once for all its brokers:

* With no ``ssl_cert``/``ssl_key``, it generates a CA, the brokers' certificate and a client
  certificate (``fakebroker.security.certificates``) in a private temporary directory (mode
  0700) that ``close()`` removes; ``files`` then names the CA and the client's certificate and
  key (``{"ca_file", "client_cert_file", "client_key_file"}``: what a client needs for TLS and
  for mTLS). Client certificates must chain to that CA, or to ``ssl_ca`` when given (then
  ``files`` has no client certificate: the generated one would not chain to it).
* With ``ssl_cert`` and ``ssl_key`` (PEM, the key unencrypted), the brokers serve that chain
  and nothing is generated; client certificates must chain to ``ssl_ca``, which is then
  required for a listener that asks for them (``ssl_client_auth`` required or requested), and
  ``files`` is ``{"ca_file": ssl_ca, "client_cert_file": None, "client_key_file": None}``
  (``ssl_ca`` is taken to be the CA that issued ``ssl_cert``).

Listeners, as Kafka configures them: ``context("SSL")`` asks clients for a certificate as
``ssl_client_auth`` says (``required``: a client without one is refused in the handshake;
``requested``: asked, not needed; ``none``: not asked); ``context("SASL_SSL")`` never asks
(Kafka applies ssl.client.auth to SSL listeners; a SASL_SSL client authenticates by SASL).
TLS 1.2 and 1.3 are served, as Kafka's default ``ssl.enabled.protocols``.

A client certificate's principal (``principal``) is Kafka's default mapping: ``User:`` and
the certificate's subject distinguished name as RFC 2253/4514 writes it
(``User:CN=fakebroker-client``); a connection without a certificate is ``User:ANONYMOUS``.
"""

from __future__ import annotations

import shutil
import ssl
import tempfile
from pathlib import Path

from fakebroker.options import ClusterSettings, OptionError
from fakebroker.outcomes import ANONYMOUS

TLS_LISTENERS = ("SSL", "SASL_SSL")
_VERIFY = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL,
           "none": ssl.CERT_NONE}


class ClusterTls:
    """The server contexts of a cluster's TLS listeners and the files its clients use."""

    def __init__(self, contexts: dict[str, ssl.SSLContext], files: dict[str, str | None],
                 directory: Path | None) -> None:
        self._contexts = contexts
        self.files = files
        self._directory = directory

    @classmethod
    def start(cls, settings: ClusterSettings) -> ClusterTls:
        """TLS for the TLS listeners of ``settings.listeners`` (``OptionError`` when the
        settings cannot serve them: a listener asks for client certificates of no CA, a PEM
        file cannot be read)."""
        client_auth = settings.ssl_client_auth if "SSL" in settings.listeners else "none"
        directory = None
        if settings.ssl_cert is not None and settings.ssl_key is not None:
            if client_auth != "none" and settings.ssl_ca is None:
                raise OptionError(f"ssl_client_auth: {client_auth} with ssl_cert needs ssl_ca "
                                  "(the CA client certificates must chain to)")
            chain = settings.ssl_cert, settings.ssl_key
            client_ca = settings.ssl_ca
            files: dict[str, str | None] = {"ca_file": settings.ssl_ca,
                                            "client_cert_file": None, "client_key_file": None}
        else:
            from fakebroker.security.certificates import generate

            directory = Path(tempfile.mkdtemp(prefix="fakebroker-tls-"))  # mode 0700
            try:
                made = generate(directory, [settings.advertised])
            except BaseException:
                shutil.rmtree(directory, ignore_errors=True)
                raise
            chain = str(made.broker_cert_file), str(made.broker_key_file)
            client_ca = settings.ssl_ca or str(made.ca_file)
            given_ca = settings.ssl_ca is not None
            files = {"ca_file": str(made.ca_file),
                     "client_cert_file": None if given_ca else str(made.client_cert_file),
                     "client_key_file": None if given_ca else str(made.client_key_file)}
        try:
            contexts = {name: server_context(chain, client_ca,
                                             client_auth if name == "SSL" else "none")
                        for name in TLS_LISTENERS if name in settings.listeners}
        except BaseException:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)
            raise
        return cls(contexts, files, directory)

    def context(self, listener: str) -> ssl.SSLContext | None:
        """The server context of listener ``listener``; None for one without TLS."""
        return self._contexts.get(listener)

    def close(self) -> None:
        """Remove the generated files (the cluster stopped)."""
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None


def server_context(chain: tuple[str, str], client_ca: str | None,
                   client_auth: str) -> ssl.SSLContext:
    """A server context serving ``chain`` (certificate file, key file), TLS 1.2 and 1.3,
    asking clients for a certificate chained to ``client_ca`` as ``client_auth`` says."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(*chain)
        if client_auth != "none" and client_ca is not None:
            context.load_verify_locations(client_ca)
    except (OSError, ssl.SSLError) as exc:
        raise OptionError(f"ssl_cert, ssl_key or ssl_ca: cannot load them: {exc}") from None
    context.verify_mode = _VERIFY[client_auth]
    return context


def principal(der: bytes | None) -> str:
    """The principal of a TLS connection whose handshake is done, from the client's
    certificate (DER, as ``getpeercert(binary_form=True)`` gives it): ``User:`` and its
    subject DN (RFC 4514, as Java's RFC 2253 form writes the standard attributes CN, L, ST,
    O, OU, C, STREET, DC, UID); ``User:ANONYMOUS`` without one. ``ValueError`` for a
    certificate ``cryptography`` cannot read (OpenSSL accepted it)."""
    if not der:
        return ANONYMOUS
    from cryptography import x509

    return "User:" + x509.load_der_x509_certificate(der).subject.rfc4514_string()
