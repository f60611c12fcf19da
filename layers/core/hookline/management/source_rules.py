"""What a caller may put in a source, and what its audit entries record.

Where provider catch-up connects (`options.catchup.api_base`) and which Secrets Manager secret
it reads (`options.catchup.api_key_secret_arn`) are an operator's to set: a tenant-scoped
caller that sets or changes either is refused (403 naming the field), and what an operator set
stays whatever a tenant sends (docs/decisions/0026-catch-up-options-are-operator-territory.md).

Audit entries of a source's creation, change and deletion record the values of its plain
fields and only the names of its secret ones (its verification secret, an inline catch-up API
key), as dotted paths (`options.catchup.page_size`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hookline.catchup.base import CatchupError, CatchupSettings, check_secret_of_tenant
from hookline.errors import BadRequest
from hookline.management.access import Caller
from hookline.repositories.sources import REDACTED

OPERATOR_CATCHUP_FIELDS = ("api_base", "api_key_secret_arn")
CATCHUP_KEY = "options.catchup.api_key"
PLAIN_FIELDS = ("tenant_id", "name", "scheme", "tolerance_seconds")


def _catchup(options: Mapping[str, Any] | None) -> Mapping[str, Any]:
    catchup = options.get("catchup") if isinstance(options, Mapping) else None
    return catchup if isinstance(catchup, Mapping) else {}


def _set(value: Any) -> bool:
    return value is not None and value != ""


def guard_catchup_options(
    caller: Caller, options: Mapping[str, Any], stored: Mapping[str, Any] | None, *, tenant_id: str
) -> dict[str, Any]:
    """`options` as the caller may save them on a source of `tenant_id`, checked as the
    catch-up reads them (400 naming the key). A tenant may not set or change an operator-only
    field (403 naming it), and what an operator stored there is kept, sent back or not; an
    operator's key secret must be under the source's tenant's prefix (400)."""
    options = dict(options)
    if caller.operator:
        secret = _catchup(options).get("api_key_secret_arn")
        if _set(secret) and isinstance(secret, str):
            _valid(lambda: check_secret_of_tenant(secret, tenant_id))
    else:
        options = _operator_fields_kept(caller, options, stored)
    _valid(lambda: CatchupSettings.from_options(options))
    return options


def _valid(check: Callable[[], object]) -> None:
    try:
        check()
    except CatchupError as err:
        raise BadRequest(str(err)) from None


def _operator_fields_kept(
    caller: Caller, options: dict[str, Any], stored: Mapping[str, Any] | None
) -> dict[str, Any]:
    sent, kept = _catchup(options), _catchup(stored)
    for name in OPERATOR_CATCHUP_FIELDS:
        if _set(sent.get(name)) and sent.get(name) != kept.get(name):
            caller.require_operator(f"set options.catchup.{name}")
    held = {name: kept[name] for name in OPERATOR_CATCHUP_FIELDS if _set(kept.get(name))}
    if not held and not any(name in sent for name in OPERATOR_CATCHUP_FIELDS):
        return options
    catchup = {k: v for k, v in sent.items() if k not in OPERATOR_CATCHUP_FIELDS}
    return {**options, "catchup": {**catchup, **held}}


def _flat(value: Any, path: str) -> dict[str, Any]:
    """Leaves of nested objects by dotted path (lists and scalars are leaves)."""
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flat(inner, f"{path}.{key}"))
        return out
    return {path: value}


def _fields(source: Mapping[str, Any]) -> dict[str, Any]:
    """A source's audited fields by path, the catch-up key left out."""
    fields = {name: source[name] for name in PLAIN_FIELDS if name in source}
    options = source.get("options")
    if isinstance(options, Mapping):
        fields.update({p: v for p, v in _flat(options, "options").items() if p != CATCHUP_KEY})
    return fields


def has_catchup_key(options: Mapping[str, Any] | None) -> bool:
    """Whether `options` hold an inline catch-up API key (sealed or not)."""
    return _set(_catchup(options).get("api_key"))


def created(source: Mapping[str, Any], *, secret_given: bool) -> dict[str, Any]:
    """The audit of a new source: its plain fields' values, its secrets' names."""
    secrets = ["secret" if secret_given else "secret (generated)"]
    if has_catchup_key(source.get("options")):
        secrets.append(CATCHUP_KEY)
    return {"set": _fields(source), "secrets_set": secrets}


def changed(
    before: Mapping[str, Any], changes: Mapping[str, Any], *, stored_options: Mapping[str, Any]
) -> dict[str, Any]:
    """The audit of a change: each plain field that changed, from and to; the names of the
    secrets that changed (a catch-up key sent as `REDACTED` is kept, so unchanged)."""
    after = {**before, **changes}
    old, new = _fields(before), _fields(after)
    diff = {
        path: {"from": old.get(path), "to": new.get(path)}
        for path in sorted(old.keys() | new.keys())
        if old.get(path) != new.get(path)
    }
    secrets: list[str] = []
    if "options" in changes:
        key = _catchup(changes["options"]).get("api_key")
        if (_set(key) and key != REDACTED) or (not _set(key) and has_catchup_key(stored_options)):
            secrets.append(CATCHUP_KEY)
    return {"changed": diff, "secrets_changed": secrets}


def deleted(source: Mapping[str, Any], *, had_key: bool) -> dict[str, Any]:
    """The audit of a deletion: what the source was, and which secrets were wiped."""
    return {
        "was": {name: source[name] for name in PLAIN_FIELDS if name in source},
        "secrets_wiped": ["secret", *([CATCHUP_KEY] if had_key else [])],
    }
