"""An OpenID Connect provider for the single sign-on tests, built from authlib's server side
(its authorization code grant, its OpenID Connect extension and its PKCE extension, RFC 7636,
required) on Flask, served by werkzeug on a loopback port in a thread of the test.

It publishes a discovery document, signs ID tokens with an RSA key of its own (published at
its `jwks_uri`), answers userinfo for its access tokens, and signs people in with a login
form of user names and passwords. What it saw is kept (`authorizations`: the parameters of
each authorization request) so that tests can check what lockstep sent it."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6750 import BearerTokenValidator
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import Flask, jsonify, request
from joserfc.jwk import RSAKey
from werkzeug.serving import make_server

CLIENT_ID = "lockstep"
CLIENT_SECRET = "provider-client-secret-" + "x" * 16


@dataclass(frozen=True)
class Person:
    """Someone the provider signs in: `claims` are added to their ID token and userinfo."""

    username: str
    password: str
    email: str
    groups: tuple[str, ...] = ()
    claims: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Client:
    redirect_uris: list[str]

    def get_client_id(self) -> str:
        return CLIENT_ID

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uris[0]

    def get_allowed_scope(self, scope: str) -> str:
        allowed = {"openid", "email", "profile", "groups"}
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, CLIENT_SECRET)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in {"client_secret_basic", "client_secret_post"}

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class _Code:
    code: str
    redirect_uri: str
    scope: str
    person: Person
    nonce: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    auth_time: int

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_nonce(self) -> str | None:
        return self.nonce

    def get_auth_time(self) -> int:
        return self.auth_time

    def get_acr(self) -> str | None:
        return None

    def get_amr(self) -> list[str] | None:
        return None


@dataclass
class _Token:
    person: Person
    scope: str
    issued_at: float

    def check_client(self, client: Any) -> bool:
        return True

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return 3600

    def is_expired(self) -> bool:
        return time.time() > self.issued_at + 3600

    def is_revoked(self) -> bool:
        return False

    def get_user(self) -> Person:
        return self.person


def _user_info(person: Person) -> UserInfo:
    return UserInfo(
        sub=person.username,
        email=person.email,
        groups=list(person.groups),
        **person.claims,
    )


class OidcProvider:
    """The provider; `start()` serves it, `url` is its issuer."""

    def __init__(self, people: list[Person]) -> None:
        self.people = {p.username: p for p in people}
        self.redirect_uris: list[str] = []
        self.authorizations: list[dict[str, str]] = []
        self._codes: dict[str, _Code] = {}
        self._tokens: dict[str, _Token] = {}
        self._key = RSAKey.generate_key(2048, parameters={"kid": "provider-key"})
        self._server = make_server("127.0.0.1", 0, self._app(), threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def discovery_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()
        self._server.server_close()

    def _app(self) -> Flask:
        app = Flask("oidc-provider")
        provider = self
        client = _Client(self.redirect_uris)
        server = AuthorizationServer(
            app,
            query_client=lambda client_id: client if client_id == CLIENT_ID else None,
            save_token=lambda token, req: provider._tokens.__setitem__(
                token["access_token"], _Token(req.user, token.get("scope", ""), time.time())
            ),
        )

        class CodeGrant(grants.AuthorizationCodeGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]  # noqa: RUF012

            def save_authorization_code(self, code: str, req: Any) -> None:
                payload = req.payload
                provider._codes[code] = _Code(
                    code=code,
                    redirect_uri=payload.redirect_uri,
                    scope=req.scope,
                    person=req.user,
                    nonce=payload.data.get("nonce"),
                    code_challenge=payload.data.get("code_challenge"),
                    code_challenge_method=payload.data.get("code_challenge_method"),
                    auth_time=int(time.time()),
                )

            def query_authorization_code(self, code: str, _: Any) -> _Code | None:
                return provider._codes.get(code)

            def delete_authorization_code(self, authorization_code: _Code) -> None:
                provider._codes.pop(authorization_code.code, None)

            def authenticate_user(self, authorization_code: _Code) -> Person:
                return authorization_code.person

        class OpenId(OpenIDCode):
            def exists_nonce(self, nonce: str, req: Any) -> bool:
                return any(c.nonce == nonce for c in provider._codes.values())

            def resolve_client_private_key(self, _: Any) -> RSAKey:
                return provider._key

            def get_client_algorithm(self, _: Any) -> str:
                return "RS256"

            def get_client_claims(self, _: Any) -> dict[str, Any]:
                return {"iss": provider.url, "aud": [CLIENT_ID]}

            def get_encode_header(self, _: Any) -> dict[str, str]:
                return {"alg": "RS256", "kid": "provider-key"}

            def generate_user_info(self, user: Person, scope: str) -> UserInfo:
                return _user_info(user)

        server.register_grant(CodeGrant, [OpenId(require_nonce=True), CodeChallenge(required=True)])

        class Tokens(BearerTokenValidator):
            def authenticate_token(self, token_string: str) -> _Token | None:
                return provider._tokens.get(token_string)

        protected = ResourceProtector()
        protected.register_token_validator(Tokens())

        @app.get("/.well-known/openid-configuration")
        def discovery() -> Any:
            return jsonify(
                issuer=provider.url,
                authorization_endpoint=f"{provider.url}/authorize",
                token_endpoint=f"{provider.url}/token",
                userinfo_endpoint=f"{provider.url}/userinfo",
                jwks_uri=f"{provider.url}/jwks",
                response_types_supported=["code"],
                subject_types_supported=["public"],
                id_token_signing_alg_values_supported=["RS256"],
                scopes_supported=["openid", "email", "profile", "groups"],
                token_endpoint_auth_methods_supported=["client_secret_basic"],
                code_challenge_methods_supported=["S256"],
            )

        @app.get("/favicon.ico")
        def favicon() -> Any:
            return "", 204

        @app.get("/jwks")
        def jwks() -> Any:
            return jsonify(keys=[provider._key.as_dict(private=False)])

        @app.route("/authorize", methods=["GET", "POST"])
        def authorize() -> Any:
            if request.method == "GET":
                provider.authorizations.append(dict(request.args))
                try:
                    server.get_consent_grant(end_user=None)
                except Exception as error:  # authlib's OAuth2Error: shown as the page
                    return f"refused: {error}", 400
                return _login_form(dict(request.args), "")
            person = provider.people.get(request.form.get("username", ""))
            if person is None or person.password != request.form.get("password"):
                return _login_form(dict(request.args), "wrong user name or password"), 401
            grant = server.get_consent_grant(end_user=person)
            return server.create_authorization_response(grant=grant, grant_user=person)

        @app.post("/token")
        def token() -> Any:
            return server.create_token_response()

        @app.get("/userinfo")
        @protected("openid")
        def userinfo() -> Any:
            from authlib.integrations.flask_oauth2 import current_token

            return jsonify(_user_info(current_token.person))

        return app


def _login_form(query: dict[str, str], problem: str) -> str:
    from html import escape
    from urllib.parse import urlencode

    action = "/authorize?" + urlencode(query)
    return (
        "<!doctype html><html><head><title>Test provider</title></head><body>"
        f"<p id='problem'>{escape(problem)}</p>"
        f"<form method='post' action='{escape(action)}'>"
        "<input id='provider-username' name='username'>"
        "<input id='provider-password' name='password' type='password'>"
        "<button id='provider-sign-in' type='submit'>Sign in</button>"
        "</form></body></html>"
    )


@contextmanager
def running_provider(people: list[Person]) -> Iterator[OidcProvider]:
    provider = OidcProvider(people)
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()
