"""What every provider catch-up shares: the source's catch-up settings, the collaborators a
run receives, and the result it reports.

A source turns catch-up on in its `options` (the shape is documented in
docs/decisions/0007-reconcile-and-provider-catch-up.md):

    {"catchup": {"enabled": true,
                 "api_base": "https://api.stripe.com",        # default per provider
                 "api_key": "..." | "api_key_secret_arn": "arn:aws:secretsmanager:...",
                                            # api_key: stored sealed, shown as "<redacted>"
                 "lookback_hours": 24,      # how far back the first run looks
                 "overlap_seconds": 300,    # each run re-reads this far behind the last one
                 "max_pages": 10,           # pages per run; a longer walk resumes next run
                 "page_size": 100,          # items per page (the providers' maximum)
                 ...provider keys: Stripe "types", "account"; GitHub "owner"+"repo" or "org",
                 "hook_id", "max_redeliveries", "redelivery_interval_seconds"}}

An inline `api_key` is a secret: the sources repository stores it sealed and answers it as
"<redacted>" (docs/decisions/0020-catch-up-credentials-sealed.md); the catch-up reads the
options through `repositories.sources.reveal_catchup_key` before they reach `CatchupSettings`.

Where the catch-up connects and which secret it reads are an operator's, never a tenant's
(docs/decisions/0026-catch-up-options-are-operator-territory.md): `api_base` and
`api_key_secret_arn` are set by operators only (the management service refuses a tenant), the
base URL is otherwise the provider's own (or the deployment's `HOOKLINE_CATCHUP_API_BASES`),
every request goes through the SSRF guard, and a secret is read only when it is under the
source's tenant's prefix, `hookline/catchup/<tenant_id>/`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from hookline.db import Database
from hookline.records import frozen
from hookline.secretbox import PREFIX as SEALED_PREFIX

DEFAULT_LOOKBACK = timedelta(hours=24)
DEFAULT_OVERLAP = timedelta(minutes=5)
DEFAULT_MAX_PAGES = 10
MAX_PAGES_LIMIT = 1000
MAX_PAGE_SIZE = 100  # the largest page Stripe and GitHub serve

SECRET_PREFIX = "hookline/catchup/"  # noqa: S105 - a name prefix, not a secret
"""Catch-up key secrets live under `hookline/catchup/<tenant_id>/`; the reconcile role may read
only the prefix of the tenant it names in its session (infra/components/catchup_secrets.py)."""

SecretReader = Callable[[str, str], str]
"""Reads a Secrets Manager secret's string: (the source's tenant id, the secret's name or ARN)."""


class CatchupError(Exception):
    """A catch-up that cannot proceed: bad configuration or a provider refusing. The message
    is safe to store and show; it never holds a credential."""


def utcnow() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


@frozen
class CatchupContext:
    """What a catch-up run works with."""

    db: Database
    http: httpx.Client  # SSRF-guarded (hookline.ssrf.guarded_client)
    read_secret: SecretReader
    clock: Callable[[], datetime] = utcnow
    # provider -> base URL in place of the provider's own (the deployment's setting)
    api_bases: Mapping[str, str] = field(default_factory=dict)

    def base_url(self, provider: str, default: str, settings: CatchupSettings) -> str:
        """Where a provider's API is: the source's operator-set `api_base`, else the
        deployment's, else the provider's own."""
        return settings.base_url(self.api_bases.get(provider, default))


@dataclass
class CatchupResult:
    """What the catch-up of one source did."""

    source_id: str
    provider: str
    listed: int = 0  # items the provider's API returned
    stored: int = 0  # events that were new to the ledger
    duplicates: int = 0  # events the ledger already held
    redeliveries_requested: int = 0
    redeliveries_exhausted: int = 0  # failed deliveries we stopped asking for
    truncated: bool = False  # stopped at max_pages; the next run resumes the walk
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The result as plain JSON values."""
        return dict(vars(self))


@frozen
class CatchupSettings:
    """A source's `options.catchup`, validated."""

    enabled: bool
    api_base: str | None
    api_key: str | None = field(repr=False)  # a credential: never in a log line
    api_key_secret_arn: str | None
    lookback: timedelta
    overlap: timedelta
    max_pages: int
    page_size: int = MAX_PAGE_SIZE
    options: Mapping[str, Any] = field(default_factory=dict, repr=False)  # holds api_key too

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> CatchupSettings:
        """Read and check `options["catchup"]`; CatchupError names the bad key."""
        raw = options.get("catchup") or {}
        if not isinstance(raw, Mapping):
            raise CatchupError("options.catchup must be an object")
        api_base = _optional_str(raw, "api_base")
        if api_base is not None and not api_base.startswith(("https://", "http://")):
            raise CatchupError("options.catchup.api_base must be an http(s) URL")
        return cls(
            enabled=bool(raw.get("enabled", False)),
            api_base=api_base.rstrip("/") if api_base else None,
            api_key=_optional_str(raw, "api_key"),
            api_key_secret_arn=_optional_str(raw, "api_key_secret_arn"),
            lookback=timedelta(hours=_number(raw, "lookback_hours", DEFAULT_LOOKBACK / _HOUR)),
            overlap=timedelta(
                seconds=_number(raw, "overlap_seconds", DEFAULT_OVERLAP.total_seconds())
            ),
            max_pages=int(_number(raw, "max_pages", DEFAULT_MAX_PAGES, top=MAX_PAGES_LIMIT)),
            page_size=int(_number(raw, "page_size", MAX_PAGE_SIZE, top=MAX_PAGE_SIZE)),
            options=raw,
        )

    def base_url(self, default: str) -> str:
        """The provider API's base URL: configured, else the provider's own."""
        return self.api_base or default

    def credential(self, read_secret: SecretReader, *, tenant_id: str) -> str:
        """The API key or token: inline, or from Secrets Manager (the secret's string, or its
        `api_key` / `token` field when the string is a JSON object). A secret outside
        `hookline/catchup/<tenant_id>/` is refused before anything is read."""
        if self.api_key:
            if self.api_key.startswith(SEALED_PREFIX):  # read without reveal_catchup_key
                raise CatchupError("options.catchup.api_key is still sealed")
            return self.api_key
        if not self.api_key_secret_arn:
            raise CatchupError("options.catchup needs api_key or api_key_secret_arn")
        check_secret_of_tenant(self.api_key_secret_arn, tenant_id)
        try:
            text = read_secret(tenant_id, self.api_key_secret_arn)
        except Exception as err:  # boto3 raises many kinds; none may leak the value
            raise CatchupError(f"cannot read the API key secret ({type(err).__name__})") from None
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            for key in ("api_key", "token"):
                if isinstance(doc.get(key), str) and doc[key]:
                    return str(doc[key])
            raise CatchupError("the API key secret has no api_key or token field")
        if not text.strip():
            raise CatchupError("the API key secret is empty")
        return text.strip()

    def text(self, key: str) -> str | None:
        """A provider-specific string option."""
        return _optional_str(self.options, key)

    def number(self, key: str, default: float) -> float:
        """A provider-specific positive number option."""
        return _number(self.options, key, default)


_HOUR = timedelta(hours=1)


def secret_name(secret_id: str) -> str | None:
    """A Secrets Manager secret's name, from its name or its (full or partial) ARN; None for
    an ARN of something else."""
    if secret_id.startswith("arn:"):
        parts = secret_id.split(":", 6)
        if len(parts) != 7 or parts[2] != "secretsmanager" or parts[5] != "secret":
            return None
        return parts[6]
    return secret_id


def check_secret_of_tenant(secret_id: str, tenant_id: str) -> None:
    """Refuse a catch-up key secret that is not under the tenant's own prefix."""
    own = f"{SECRET_PREFIX}{tenant_id}/"
    name = secret_name(secret_id)
    if not tenant_id or name is None or not name.startswith(own) or len(name) == len(own):
        raise CatchupError(
            f"options.catchup.api_key_secret_arn must name a secret under {own} "
            "(the source's own tenant)"
        )


def _optional_str(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise CatchupError(f"options.catchup.{key} must be a string")
    return str(value)


def _number(raw: Mapping[str, Any], key: str, default: float, *, top: float | None = None) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise CatchupError(f"options.catchup.{key} must be a positive number")
    if top is not None and value > top:
        raise CatchupError(f"options.catchup.{key} must be at most {top:g}")
    return float(value)


def http_failure(provider: str, what: str, response: httpx.Response) -> CatchupError:
    """The error for a provider answer that is not a success (status only: bodies may echo
    request details)."""
    return CatchupError(f"{provider} API answered {response.status_code} to {what}")
