"""The console's paths on a REST API's own host: the stage goes before every path the pages
name, and nothing a page shows as data is rewritten."""

from __future__ import annotations

from typing import Any

import pytest

from hookline.console.mount import prefix_response, public_base, stage_prefix

pytestmark = pytest.mark.unit


def _event(host: str, stage: str) -> dict[str, Any]:
    return {"headers": {"Host": host}, "requestContext": {"stage": stage}, "path": "/console"}


@pytest.mark.parametrize(
    ("host", "stage", "prefix"),
    [
        ("abc.execute-api.eu-west-1.amazonaws.com", "live", "/live"),
        ("abc.execute-api.eu-west-1.amazonaws.com", "$default", ""),  # HTTP API
        ("hooks.example.com", "live", ""),  # a custom domain maps the stage away
        ("127.0.0.1:8080", "local", ""),  # the dev stack's front
    ],
)
def test_only_an_execute_api_host_on_a_named_stage_has_a_prefix(
    host: str, stage: str, prefix: str
) -> None:
    assert stage_prefix(_event(host, stage)) == prefix


def test_the_public_base_is_what_the_browser_sees() -> None:
    event = _event("abc.execute-api.eu-west-1.amazonaws.com", "live")
    assert public_base(event) == "https://abc.execute-api.eu-west-1.amazonaws.com/live"


def test_links_forms_redirects_and_cookie_paths_get_the_stage() -> None:
    # Given a page whose data shows a hostile payload (autoescaped, as every template is)
    body = (
        '<a href="/console/events">x</a><form action="/portal/endpoints"></form>'
        '<script src="/console/static/htmx.js"></script><div hx-get="/console/replays/r1">'
        '<meta http-equiv="refresh" content="0; url=/console/tenants">'
        "<pre>&lt;a href=&#34;/console/evil&#34;&gt; href=/console/plain</pre>"
        '<a href="https://elsewhere.example/console">out</a>'
    )
    response = {
        "statusCode": 200,
        "body": body,
        "multiValueHeaders": {
            "Content-Type": ["text/html; charset=utf-8"],
            "Set-Cookie": ["hl_console=v; Path=/console; Secure; HttpOnly"],
            "Location": ["/portal"],
        },
    }
    out = prefix_response(response, "/live")
    text = out["body"]
    # Then what the template wrote carries the stage
    for expected in (
        'href="/live/console/events"',
        'action="/live/portal/endpoints"',
        'src="/live/console/static/htmx.js"',
        'hx-get="/live/console/replays/r1"',
        "url=/live/console/tenants",
    ):
        assert expected in text
    # And the payload's text and other sites' links are left as they were
    assert "&lt;a href=&#34;/console/evil&#34;&gt; href=/console/plain" in text
    assert 'href="https://elsewhere.example/console"' in text
    headers = out["multiValueHeaders"]
    assert headers["Set-Cookie"] == ["hl_console=v; Path=/live/console; Secure; HttpOnly"]
    assert headers["Location"] == ["/live/portal"]


def test_assets_and_answers_without_a_prefix_are_untouched() -> None:
    css = {"statusCode": 200, "body": "a{}", "headers": {"Content-Type": "text/css"}}
    assert prefix_response(css, "/live") == css
    page = {"statusCode": 200, "body": '<a href="/console">', "headers": {}}
    assert prefix_response(page, "") is page
