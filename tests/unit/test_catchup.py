"""Catch-up settings and GitHub's failed-delivery reading, without I/O."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from hookline.catchup.base import CatchupError, CatchupSettings
from hookline.catchup.github import failed_guids, succeeded


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
    assert settings(api_key="sk_inline").credential(lambda arn: "unused") == "sk_inline"
    secret = settings(api_key_secret_arn="arn:s")
    assert secret.credential(lambda arn: "sk_plain\n") == "sk_plain"
    assert secret.credential(lambda arn: json.dumps({"api_key": "sk_json"})) == "sk_json"
    assert secret.credential(lambda arn: json.dumps({"token": "ghp_x"})) == "ghp_x"
    with pytest.raises(CatchupError, match="needs api_key or api_key_secret_arn"):
        settings().credential(lambda arn: "x")


def test_an_inline_key_is_kept_out_of_repr_and_a_still_sealed_one_is_never_sent():
    # A settings object in a log line or a traceback does not show the key
    assert "sk_inline_secret" not in repr(settings(api_key="sk_inline_secret"))
    # A key read without opening it first is refused rather than sent to the provider
    with pytest.raises(CatchupError, match="api_key is still sealed"):
        settings(api_key="hlenc1:key_1:AAAA").credential(lambda arn: "unused")


def test_a_secret_that_cannot_be_read_never_shows_its_value_or_the_cause_text():
    def boom(arn: str) -> str:
        raise RuntimeError("AccessDenied for sk_live_very_secret")

    with pytest.raises(CatchupError) as err:
        settings(api_key_secret_arn="arn:s").credential(boom)
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
