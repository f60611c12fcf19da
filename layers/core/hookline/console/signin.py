"""Operators' console sessions where a Cognito user pool is configured (on AWS).

A console request without a session is sent to the hosted UI (`SignInRequired`); the
callback (`/console/callback`) checks the attempt's state, exchanges the code, verifies the ID
token (hookline.console.cognito) and requires the operator group. What it proves becomes the
`hl_operator` cookie: a token of the same signed machinery as portal sessions
(hookline.sessions, purpose `operator`), HttpOnly, Secure, SameSite=Strict, path `/console`,
expiring with the ID token — after that the hosted UI's own session signs the operator in
again without a password prompt, and a user removed from the group is out within the hour.
CSRF tokens stay the console's own (`hl_console`, hookline.console.web).

On the dev stack (local mode, loopback, no user pool) the console takes the key `/v1` takes
(`HOOKLINE_API_KEY`, decision 0030/0061): as `Authorization: Bearer <key>`, or typed once into
`/console/login`, which sets the same `hl_operator` cookie bound to that key (a new key voids
it). With no key configured the console is open on loopback, as `/v1` is.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.shared.cookies import Cookie, SameSite

from hookline.console import cognito, mount, web
from hookline.errors import KeyRequired, SessionInvalid, SignInRequired, Unauthorized
from hookline.management.access import OPERATOR, Caller
from hookline.sessions import csrf_token, session_key, sign, verify
from hookline.settings import Settings, get_settings

OPERATOR_GROUP = "operators"
SESSION_COOKIE = "hl_operator"
ATTEMPT_COOKIE = "hl_signin"  # state, PKCE verifier and where to go back, for one attempt
OPERATOR_SESSION = "operator"  # the purpose of the session token
ATTEMPT_SECONDS = 600
LOCAL_OPERATOR = "console:local"  # who the dev stack's console acts as (the audit's actor)
LOCAL_SESSION = timedelta(hours=12)


def local_operator(app: APIGatewayRestResolver, settings: Settings) -> Caller:
    """The dev stack's console operator: anyone on loopback when no key is configured; else
    a caller with the stack's key (Bearer header, or the cookie `/console/login` sets)."""
    key = settings.api_key
    if not key:
        return Caller(LOCAL_OPERATOR, OPERATOR)
    authorization = web.header_of(app, "Authorization")
    if authorization:
        kind, _, given = authorization.strip().partition(" ")
        if kind.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), key.encode()):
            return Caller(LOCAL_OPERATOR, OPERATOR)
        raise Unauthorized("that is not this stack's operator key")
    value = web.cookies_of(app).get(SESSION_COOKIE)
    if value:
        try:
            found = verify(session_key(settings), OPERATOR_SESSION, value)
        except SessionInvalid as err:
            raise KeyRequired(str(err)) from err
        if hmac.compare_digest(found.tenant_id.encode(), _key_bound(key).encode()):
            return Caller(LOCAL_OPERATOR, OPERATOR)
    raise KeyRequired("sign in with the stack's operator key ($HOOKLINE_API_KEY)")


def _key_bound(key: str) -> str:
    """The session's subject: bound to the key, so a new key signs every browser out."""
    digest = hashlib.sha256(f"hookline console {key}".encode()).hexdigest()[:32]
    return _encode(f"{LOCAL_OPERATOR}:{digest}")


def signed_in_operator(app: APIGatewayRestResolver) -> Caller | None:
    """The operator of this request's console session; None where no user pool is configured
    (local mode decides); SignInRequired without a valid session."""
    if cognito.UserPool.from_settings(get_settings()) is None:
        return None
    value = web.cookies_of(app).get(SESSION_COOKIE)
    if not value:
        raise SignInRequired("sign in to use the console")
    try:
        found = verify(session_key(get_settings()), OPERATOR_SESSION, value)
    except SessionInvalid as err:
        raise SignInRequired(str(err)) from err
    return Caller(_decode(found.tenant_id), OPERATOR)


def register(app: APIGatewayRestResolver) -> None:
    """Add sign-in, its callback and sign-out to `app`, and send SignInRequired to sign in."""

    def pool() -> cognito.UserPool:
        found = cognito.UserPool.from_settings(get_settings())
        if found is None:
            raise Unauthorized("operators sign in only where a user pool is configured")
        return found

    def start(_: SignInRequired) -> Response[str]:
        event = app.current_event
        back = event.path if event.http_method == "GET" else "/console"
        state, verifier = secrets.token_urlsafe(24), cognito.new_verifier()
        attempt = Cookie(
            ATTEMPT_COOKIE, f"{state}.{verifier}.{_encode(back)}", path="/console",
            secure=True, http_only=True, max_age=ATTEMPT_SECONDS,
            # Cognito sends the browser back from its own site: a Strict cookie would not come.
            same_site=SameSite.LAX_MODE,
        )  # fmt: skip
        location = cognito.authorize_url(
            pool(), redirect_uri=_callback_uri(app), state=state, verifier=verifier
        )
        return Response(
            status_code=302, content_type=web.HTML, body="",
            headers={"Location": location, **web.security_headers()}, cookies=[attempt],
        )  # fmt: skip

    app.exception_handler(SignInRequired)(start)

    @app.get("/console/callback")
    def callback() -> Response[str]:
        user_pool = pool()
        q = web.query(app)
        state, verifier, back = _attempt(web.cookies_of(app).get(ATTEMPT_COOKIE, ""))
        if not q.get("code") or not secrets.compare_digest(q.get("state", ""), state):
            raise SessionInvalid("this sign-in attempt is not this browser's: sign in again")
        token = cognito.exchange_code(
            user_pool, q["code"], redirect_uri=_callback_uri(app), verifier=verifier
        )
        user = cognito.verify_id_token(user_pool, token)
        if OPERATOR_GROUP not in user.groups:
            raise Unauthorized("only members of the operator group may use the console")
        key = session_key(get_settings())
        value = sign(key, OPERATOR_SESSION, _encode(user.principal), user.expires_at)
        max_age = max(0, int((user.expires_at - datetime.now(UTC)).total_seconds()))
        cookies = [
            web.cookie(SESSION_COOKIE, value, path="/console", secure=True, max_age=max_age),
            _cleared(ATTEMPT_COOKIE),
        ]
        # A page, not a redirect: the browser arrived from Cognito's site, and a redirect
        # would carry that cross-site origin on, so the Strict cookie would not be sent yet.
        return web.page("signed_in.html", {"next": back, "area": "console"}, cookies=cookies)

    def to_key_sign_in(err: KeyRequired) -> Response[str]:
        event = app.current_event
        if event.http_method != "GET":
            message = {"message": str(err), "area": "console"}
            return web.page("refused.html", message, status=401)
        return web.redirect(f"/console/login?next={quote(event.path, safe='/-_.~')}")

    app.exception_handler(KeyRequired)(to_key_sign_in)

    def key_form(status: int = 200, error: str | None = None) -> Response[str]:
        settings = get_settings()
        if not (settings.local_mode and settings.api_key):
            raise Unauthorized("the console signs in with a key only on the dev stack")
        seed, new = web.console_csrf_seed(app, web.secure_cookies(app, settings.local_mode))
        back = _next(web.query(app).get("next") or web.form(app).get("next", ""))
        context = {
            "area": "console", "base": "/console", "next": back, "error": error,
            "csrf": csrf_token(session_key(settings), seed),
        }  # fmt: skip
        cookies = [new] if new else None
        return web.page("console_login.html", context, status=status, cookies=cookies)

    @app.get("/console/login")
    def key_sign_in() -> Response[str]:
        return key_form()

    @app.post("/console/login")
    def key_signed_in() -> Response[str]:
        settings = get_settings()
        submitted = web.form(app)
        seed = web.cookies_of(app).get(web.CSRF_COOKIE)
        if not web.check_csrf(session_key(settings), seed, submitted, app):
            return key_form(403, "this form has expired: sign in again")
        key, given = settings.api_key or "", submitted.get("key", "").strip()
        if not key or not hmac.compare_digest(given.encode(), key.encode()):
            return key_form(403, "that is not this stack's operator key")
        expires_at = datetime.now(UTC) + LOCAL_SESSION
        value = sign(session_key(settings), OPERATOR_SESSION, _key_bound(key), expires_at)
        secure = web.secure_cookies(app, settings.local_mode)
        made = web.cookie(
            SESSION_COOKIE, value, path="/console", secure=secure,
            max_age=int(LOCAL_SESSION.total_seconds()),
        )  # fmt: skip
        return web.redirect(_next(submitted.get("next", "")), cookies=[made])

    @app.get("/console/signout")
    def signout() -> Response[str]:
        if cognito.UserPool.from_settings(get_settings()) is None:
            secure = web.secure_cookies(app, get_settings().local_mode)
            cleared = web.cookie(SESSION_COOKIE, "", path="/console", secure=secure, max_age=0)
            return web.page("signed_in.html", {"next": None, "area": "console"}, cookies=[cleared])
        back = f"{mount.public_base(app.current_event.raw_event)}/console/signed-out"
        return Response(
            status_code=302, content_type=web.HTML, body="",
            headers={"Location": cognito.logout_url(pool(), return_to=back),
                     **web.security_headers()},
            cookies=[_cleared(SESSION_COOKIE)],
        )  # fmt: skip

    @app.get("/console/signed-out")
    def signed_out() -> Response[str]:
        return web.page("signed_in.html", {"next": None, "area": "console"})


def _next(back: str) -> str:
    """Where to go after signing in: a console page, never another site."""
    if not back.startswith("/console") or back.startswith(("/console/login", "//")):
        return "/console"
    return quote(back, safe="/-_.~")


def _callback_uri(app: APIGatewayRestResolver) -> str:
    """The callback as the app client lists it (Cognito refuses any other)."""
    return f"{mount.public_base(app.current_event.raw_event)}/console/callback"


def _attempt(value: str) -> tuple[str, str, str]:
    parts = value.split(".")
    if len(parts) != 3 or not all(parts):
        raise SessionInvalid("this sign-in attempt has expired: sign in again")
    back = _decode(parts[2])
    if not back.startswith("/console") or back.startswith("/console/callback"):
        back = "/console"
    return parts[0], parts[1], quote(back, safe="/-_.~")


def _cleared(name: str) -> Cookie:
    return web.cookie(name, "", path="/console", secure=True, max_age=0)


def _encode(text: str) -> str:
    """base64url without padding: no dots, so it fits in a signed token's field."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(text: str) -> str:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError) as err:
        raise SessionInvalid("this session is not valid: sign in again") from err
