"""Catch-up settings and GitHub's failed-delivery reading, without I/O."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from hookline.catchup.base import CatchupError, CatchupSettings
from hookline.catchup.github import failed_guids, succeeded
from hookline.settings import Settings

OWN_SECRET = "hookline/catchup/ten_a/stripe"


def settings(**catchup: object) -> CatchupSettings:
    return CatchupSettings.from_options({"catchup": {"enabled": True, **catchup}})


def test_defaults_are_a_day_back_five_minutes_overlap_and_full_pages():
    s = settings(api_key="k")
    assert s.enabled and s.lookback == timedelta(hours=24) and s.overlap == timedelta(minutes=5)
    assert s.max_pages == 10 and s.page_size == 100
    assert s.base_url("https://api.stripe.com") == "https://api.stripe.com"
    assert settings(api_base="http://127.0.0.1:9/").base_url("x") == "http://127.0.0.1:9"


def test_a_source_without_catchup_options_is_not_enabled():
    assert CatchupSettings.from_options({}).enabled is False


@pytest.mark.parametrize(
    ("catchup", "message"),
    [
        ({"page_size": 500}, "page_size must be at most 100"),
        ({"max_pages": 0}, "max_pages must be a positive number"),
        ({"lookback_hours": "a day"}, "lookback_hours must be a positive number"),
        ({"api_base": "ftp://x"}, "api_base must be an http(s) URL"),
        ({"api_key": ["k"]}, "api_key must be a string"),
    ],
)
def test_bad_settings_name_the_key(catchup, message):
    with pytest.raises(CatchupError, match=re.escape(message)):
        settings(**catchup)


def test_the_key_comes_inline_or_from_a_secret_string_or_its_json_field():
    assert (
        settings(api_key="sk_inline").credential(lambda t, arn: "unused", tenant_id="ten_a")
        == "sk_inline"
    )
    secret = settings(api_key_secret_arn=OWN_SECRET)
    assert secret.credential(lambda t, arn: "sk_plain\n", tenant_id="ten_a") == "sk_plain"
    as_json = json.dumps({"api_key": "sk_json"})
    assert secret.credential(lambda t, arn: as_json, tenant_id="ten_a") == "sk_json"
    as_token = json.dumps({"token": "ghp_x"})
    assert secret.credential(lambda t, arn: as_token, tenant_id="ten_a") == "ghp_x"
    with pytest.raises(CatchupError, match="needs api_key or api_key_secret_arn"):
        settings().credential(lambda t, arn: "x", tenant_id="ten_a")


def test_an_inline_key_is_kept_out_of_repr_and_a_still_sealed_one_is_never_sent():
    # A settings object in a log line or a traceback does not show the key
    assert "sk_inline_secret" not in repr(settings(api_key="sk_inline_secret"))
    # A key read without opening it first is refused rather than sent to the provider
    with pytest.raises(CatchupError, match="api_key is still sealed"):
        settings(api_key="hlenc1:key_1:AAAA").credential(lambda t, arn: "unused", tenant_id="ten_a")


def test_a_secret_that_cannot_be_read_never_shows_its_value_or_the_cause_text():
    def boom(tenant: str, arn: str) -> str:
        raise RuntimeError("AccessDenied for sk_live_very_secret")

    with pytest.raises(CatchupError) as err:
        settings(api_key_secret_arn=OWN_SECRET).credential(boom, tenant_id="ten_a")
    assert "sk_live" not in str(err.value) and "RuntimeError" in str(err.value)


def delivery(guid: str, code: int, at: str, status: str | None = None) -> dict[str, object]:
    return {
        "id": hash((guid, at)) % 10_000,
        "guid": guid,
        "status_code": code,
        "status": status if status is not None else ("OK" if code < 300 else "failed"),
        "delivered_at": at,
    }


def test_a_guid_failed_only_when_none_of_its_deliveries_succeeded():
    items = [
        delivery("a", 200, "2024-05-01T10:00:00Z"),
        delivery("b", 503, "2024-05-01T10:01:00Z"),
        delivery("b", 502, "2024-05-01T10:05:00Z"),
        delivery("c", 500, "2024-05-01T10:02:00Z"),
        delivery("c", 200, "2024-05-01T10:03:00Z"),
        delivery("d", 200, "2024-05-01T10:04:00Z", status="Invalid HTTP Response"),
    ]
    failed = failed_guids(items)
    assert sorted(failed) == ["b", "d"]
    assert failed["b"]["delivered_at"] == "2024-05-01T10:05:00Z"  # the newest attempt
    assert succeeded(items[0]) and not succeeded(items[5])


@pytest.mark.parametrize(
    "secret_id",
    [
        "hookline/catchup/ten_b/stripe",  # another tenant's
        "hookline/catchup/ten_ab/stripe",  # a tenant whose id starts with ours
        "hookline/catchup/ten_a/",  # the prefix itself, no secret
        "hookline/catchup/stripe-acme",  # the old shared prefix
        "hookline/database-url",
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:hookline/catchup/ten_b/x-AbCdEf",
        "arn:aws:iam::123456789012:role/hookline/catchup/ten_a/x",
    ],
)
def test_a_secret_outside_the_sources_tenant_prefix_is_never_read(secret_id):
    # Given a source of tenant ten_a whose options name a secret outside its prefix
    asked: list[tuple[str, str]] = []

    def read(tenant: str, name: str) -> str:
        asked.append((tenant, name))
        return "sk_live_someone_elses"

    # When the catch-up asks for its key, then it is refused before anything is read
    with pytest.raises(CatchupError, match="under hookline/catchup/ten_a/"):
        settings(api_key_secret_arn=secret_id).credential(read, tenant_id="ten_a")
    assert asked == []


def test_a_secret_under_the_tenants_prefix_is_read_as_that_tenant():
    asked: list[tuple[str, str]] = []

    def read(tenant: str, name: str) -> str:
        asked.append((tenant, name))
        return "sk_own"

    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hookline/catchup/ten_a/s-AbCdEf"
    for secret_id in (OWN_SECRET, arn):
        assert (
            settings(api_key_secret_arn=secret_id).credential(read, tenant_id="ten_a") == "sk_own"
        )
    assert asked == [("ten_a", OWN_SECRET), ("ten_a", arn)]


def test_the_deployment_names_provider_bases_and_nothing_else_does():
    # Given the settings of a test stack with fake providers on loopback
    env = {
        "HOOKLINE_CATCHUP_API_BASES": "stripe=http://127.0.0.1:9/, github=https://gh.internal",
        "HOOKLINE_CATCHUP_ALLOW_PRIVATE": "1",
    }
    parsed = Settings.from_env(env)
    # Then each provider's base is read, and private addresses are allowed only when said so
    assert dict(parsed.catchup_api_bases) == {
        "stripe": "http://127.0.0.1:9",
        "github": "https://gh.internal",
    }
    assert parsed.catchup_allow_private is True
    assert Settings.from_env({}).catchup_api_bases == ()
    assert Settings.from_env({}).catchup_allow_private is False
    with pytest.raises(ValueError, match="provider=http"):
        Settings.from_env({"HOOKLINE_CATCHUP_API_BASES": "stripe=ftp://x"})
