"""The management API and the console build a resolver per resource (per set of pages) a
request names, with only the routes it may take (decision 0079). These tests hold the tables
that choose them to the routes themselves: a cold container's first request to any route
finds it, ahead of the same routes as in the resolver with every route (no I/O)."""

from __future__ import annotations

import re

import pytest

from hookline.api.app import build_app as build_api
from hookline.api.app import request_segment
from hookline.api.routes import segment_of
from hookline.console.app import PAGES, pages_for
from hookline.console.app import build_app as build_console
from hookline_dev.local.apigw import build_rest_event

pytestmark = pytest.mark.unit

Route = tuple[str, str]  # method, rule


def routes(app: object) -> list[Route]:
    """The routes of a resolver, in the order it tries them."""
    found = [*app._static_routes, *app._dynamic_routes]  # type: ignore[attr-defined]
    return [(r.method, r.path) for r in found]


def concrete(rule: str) -> str:
    """A path the rule takes: each parameter filled in."""
    return re.sub(r"<[^>]+>", "x_1", rule)


def in_order(part: list[Route], whole: list[Route]) -> bool:
    """Whether `part` holds routes of `whole`, in the same order."""
    rest = iter(whole)
    return all(route in rest for route in part)


API_ROUTES = routes(build_api())
CONSOLE_ROUTES = routes(build_console())


@pytest.mark.parametrize("route", API_ROUTES, ids=" ".join)
def test_every_api_route_answers_a_cold_containers_first_request(route: Route) -> None:
    method, rule = route
    # Given a request to the route, as a cold container's first
    event = build_rest_event(method, concrete(rule), {}, b"")
    # When the function builds the resolver for the resource the path names
    built = routes(build_api(segment=request_segment(event)))
    # Then the route is there, behind the same routes as in the resolver with every route
    assert route in built
    assert in_order(built, API_ROUTES)


@pytest.mark.parametrize("route", CONSOLE_ROUTES, ids=" ".join)
def test_every_console_page_answers_a_cold_containers_first_request(route: Route) -> None:
    _, rule = route
    # When the function builds the resolver for the pages a request's path may take
    built = routes(build_console(pages_for(concrete(rule))))
    # Then the page is there, behind the same routes as in the resolver with every page
    assert route in built
    assert in_order(built, CONSOLE_ROUTES)


@pytest.mark.parametrize(
    ("path", "segment"),
    [
        ("/v1/endpoints", "endpoints"),
        ("/v1/endpoints/ep_1/health", "endpoints"),
        ("/prod/v1/event-types/order.paid", "event-types"),  # a stage before /v1
        ("/v1/v1/status", "status"),  # a stage named v1
        ("/v1/nowhere", None),
        ("/", None),
    ],
)
def test_a_path_names_its_resource_or_none(path: str, segment: str | None) -> None:
    # Then a path names the resource whose routes it may take, or none (every router)
    assert segment_of(path) == segment


def test_a_path_naming_no_resource_gets_every_route_and_page() -> None:
    # When a request names no known resource or page
    api = routes(build_api(segment=segment_of("/v1/nowhere")))
    console = pages_for("/elsewhere")
    # Then its resolver has every route (so it answers as it always did: 404 from all of them)
    assert api == API_ROUTES
    assert console == tuple(PAGES)


def test_sign_in_needs_no_page_but_every_resolver_has_it() -> None:
    # When the first request is a sign-in
    pages = pages_for("/console/login")
    # Then no page module is loaded for it, and the sign-in routes are still there
    assert pages == ()
    assert ("GET", "/console/login") in routes(build_console(pages))
    # And every other page's resolver can send its caller to sign in
    assert ("GET", "/console/callback") in routes(build_console(pages_for("/portal")))
