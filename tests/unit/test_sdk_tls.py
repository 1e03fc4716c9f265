"""How the SDK verifies the server (sdk/client.py `_verify`): https against the usual
authorities; plain http with a context that loads none, yet would still refuse any
certificate, were a TLS connection ever made."""

from __future__ import annotations

import ssl

from lockstep.sdk.client import _verify


def test_https_verifies_against_the_usual_authorities() -> None:
    assert _verify("https://lockstep.example.com") is True


def test_plain_http_loads_no_authorities_and_trusts_no_one() -> None:
    context = _verify("http://127.0.0.1:8080")
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
