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


class Unauthorized(HooklineError):
    """A management request without an authenticated identity (403)."""


class Conflict(HooklineError):
    """The request conflicts with the current state of an object (409)."""


class DatabaseUnavailable(HooklineError):
    """Postgres cannot be reached; the caller should retry later (503)."""


class UnsafeURL(BadRequest):
    """An endpoint URL that is not https or resolves to a non-global address."""
