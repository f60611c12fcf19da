"""Domain exceptions. Handlers map these to status codes; none carries a secret."""

from __future__ import annotations


class HooklineError(Exception):
    """Base of every domain error. `str(err)` is safe to show to a caller."""


class BadRequest(HooklineError):
    """The caller sent something malformed (400)."""


class VerificationFailed(HooklineError):
    """Missing or invalid signature, or a timestamp outside the tolerance (401)."""


class NotFound(HooklineError):
    """The object does not exist, or is not visible to the caller (404)."""


class PayloadTooLarge(HooklineError):
    """The body exceeds the accepted size (413)."""


class UnsupportedMediaType(HooklineError):
    """The scheme requires a content type the request does not have (415)."""


class SessionInvalid(HooklineError):
    """A console or portal session (or the link that starts one) that is forged, expired
    or missing (401)."""


class SignInRequired(SessionInvalid):
    """A console request without a valid operator session where operators sign in through
    Cognito: the browser is sent to sign in."""


class KeyRequired(SignInRequired):
    """A console request on the dev stack without its operator key (the one `/v1` takes):
    the browser is sent to the key's sign-in page (decision 0061)."""


class Unauthorized(HooklineError):
    """A management request without an authenticated identity (403)."""


class HandshakeRefused(Unauthorized):
    """A provider handshake with a wrong verify token or a malformed challenge (403): the
    challenge is not answered."""


class MethodNotAllowed(HooklineError):
    """A method the source's provider never sends, e.g. GET without a GET handshake (405)."""


class Conflict(HooklineError):
    """The request conflicts with the current state of an object (409)."""


class UpstreamUnavailable(HooklineError):
    """A provider endpoint Hookline must reach to verify a request (SNS) did not answer (503):
    the provider retries."""


class DatabaseUnavailable(HooklineError):
    """Postgres cannot be reached; the caller should retry later (503)."""


class ReplayNotStarted(DatabaseUnavailable):
    """The replay was recorded but its runner could not be started (503: try again)."""


class RestoreNotStarted(DatabaseUnavailable):
    """The restore was recorded but its runner could not be started (503: try again)."""


class UnsafeURL(BadRequest):
    """An endpoint URL that is not https or resolves to a non-global address."""


class ArchiveUnavailable(HooklineError):
    """The ledger archive (S3) could not be written or read; nothing was removed."""


class DeliveryStillOpen(Conflict):
    """A delivery of rows about to be removed is unfinished: nothing of them is removed."""


class LedgerBusy(Conflict):
    """Retention could not take the hot tables' locks within its wait, or a deadlock chose it:
    it gave way to the pipeline and removed nothing; the next run tries again."""


class EndpointAuthFailed(HooklineError):
    """An endpoint's own authentication could not be set up for an attempt: its OAuth2 token
    endpoint failed or answered garbage, or its TLS material did not load. The attempt fails
    with this message as its reason (never the client secret or the key)."""


class EvaluationBudgetExceeded(BadRequest):
    """Evaluating what a tenant configured (a content filter, an input transformer) on one
    event went over its budget of steps or rendered bytes (docs/decisions/0060). It fails
    closed: the event is not delivered through it, and the reason is recorded; a caller
    who asked (preview) gets 400."""


# A contained failure's reason is shown in the API, the console and an attempt's record:
# short, and never a whole payload.
REASON_CHARS = 300


def failure_reason(where: str, err: BaseException) -> str:
    """The reason recorded for a failure contained to one event or delivery (decision 0059):
    `where` it failed, the exception's class and the first line of its message, bounded, with
    any NUL removed (Postgres text cannot hold one). Never a trace."""
    lines = str(err).replace("\x00", "").splitlines()
    message = lines[0] if lines else ""
    text = f"{where}: {type(err).__name__}" + (f": {message}" if message else "")
    return text[:REASON_CHARS]


class SchemaViolation(BadRequest):
    """A payload that breaks its type's schema, or a schema that is not a JSON Schema
    (the API answers 422). `errors` lists each failure: path, rule and message. Raised by
    hookline.event_catalogue (which re-exports it); here so the API's error mapping need not
    import jsonschema with it."""

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class SecretsUnavailable(HooklineError):
    """The data key cannot be unwrapped (KMS unreachable, a wrong master key): 503. Raised
    by hookline.secretbox (which re-exports it); here so the error mapping need not import
    cryptography with it."""
