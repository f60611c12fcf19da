"""What a tenant may put in a source's catch-up options, and what a source's audit records
(docs/decisions/0026-catch-up-options-are-operator-territory.md). No I/O."""

from __future__ import annotations

import pytest

from hookline.errors import BadRequest, Unauthorized
from hookline.management.access import Caller
from hookline.management.source_rules import changed, created, guard_catchup_options

OPERATOR = Caller("arn:aws:iam::1:role/operator", "*")
TENANT = Caller("arn:aws:iam::1:role/tenant-b", "ten_b")
STORED = {
    "catchup": {
        "enabled": True,
        "api_base": "https://stripe-proxy.example",
        "api_key_secret_arn": "hookline/catchup/ten_b/stripe",
    }
}


def guard(caller: Caller, options: dict, stored: dict | None = STORED) -> dict:
    return guard_catchup_options(caller, options, stored, tenant_id="ten_b")


@pytest.mark.parametrize("field", ["api_base", "api_key_secret_arn"])
def test_a_tenant_changing_an_operator_field_is_refused_naming_it(field):
    with pytest.raises(Unauthorized, match=f"options.catchup.{field}"):
        guard(TENANT, {"catchup": {"enabled": True, field: "https://sink.example/x"}})
    with pytest.raises(Unauthorized, match=f"options.catchup.{field}"):
        guard(TENANT, {"catchup": {field: "hookline/catchup/ten_b/x"}}, stored=None)


def test_what_an_operator_set_is_kept_whatever_a_tenant_sends():
    echoed = guard(TENANT, {"catchup": {**STORED["catchup"], "page_size": 50}})
    omitted = guard(TENANT, {"catchup": {"enabled": False}})
    dropped = guard(TENANT, {"note": "no catch-up"})
    assert echoed == {"catchup": {**STORED["catchup"], "page_size": 50}}
    assert omitted == {"catchup": {**STORED["catchup"], "enabled": False}}
    assert dropped["catchup"] == {k: v for k, v in STORED["catchup"].items() if k != "enabled"}
    # And a tenant's own catch-up without operator fields passes as sent
    own = {"catchup": {"enabled": True, "api_key": "sk_own"}}
    assert guard(TENANT, own, stored={}) == own


def test_an_operator_sets_them_but_only_to_the_sources_tenants_secrets():
    options = {
        "catchup": {
            "api_base": "https://x.example",
            "api_key_secret_arn": "hookline/catchup/ten_b/s",
        }
    }
    assert guard(OPERATOR, options, stored=None) == options
    with pytest.raises(BadRequest, match="under hookline/catchup/ten_b/"):
        guard(OPERATOR, {"catchup": {"api_key_secret_arn": "hookline/catchup/ten_a/s"}})
    with pytest.raises(BadRequest, match="page_size must be at most 100"):
        guard(OPERATOR, {"catchup": {"page_size": 1000}})


def test_the_audit_has_plain_values_by_path_and_secret_names_only():
    before = {"tenant_id": "ten_b", "name": "shop", "scheme": "stripe", "tolerance_seconds": 300,
              "options": {"catchup": {"api_key": "hlenc1:k:sealed", "types": ["a"]}}}  # fmt: skip
    assert created(before, secret_given=False) == {
        "set": {
            "tenant_id": "ten_b",
            "name": "shop",
            "scheme": "stripe",
            "tolerance_seconds": 300,
            "options.catchup.types": ["a"],
        },
        "secrets_set": ["secret (generated)", "options.catchup.api_key"],
    }
    # A removed key is a secret change; a changed list is a value change
    removed = changed(before, {"options": {"catchup": {"types": ["a", "b"]}}},
                      stored_options=before["options"])  # fmt: skip
    assert removed == {
        "changed": {"options.catchup.types": {"from": ["a"], "to": ["a", "b"]}},
        "secrets_changed": ["options.catchup.api_key"],
    }
    kept = changed(before, {"options": {"catchup": {"api_key": "<redacted>", "types": ["a"]}}},
                   stored_options=before["options"])  # fmt: skip
    assert kept == {"changed": {}, "secrets_changed": []}
