"""The browser tier: the console and the portal in a real Chromium (Playwright for Python,
driving Debian's `chromium`) against one real `hookline dev` for the session.

The stack is the end-to-end tier's (`tests.e2e.conftest`: a fresh database, fast retries);
its fixtures are package-scoped, so this package gets a stack of its own. The tier skips,
saying why, when Playwright or the browser is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import (  # noqa: F401  (fixtures, re-used as this package's)
    Stack,
    dev_process,
    e2e_database_url,
    sink,
    stack,
)

CHROMIUM = os.environ.get("HOOKLINE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def _executable() -> str | None:
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright==1.65.2)"
    if _executable() is None:
        return f"no Chromium at {CHROMIUM} or on PATH (apt-get install -y chromium)"
    return None


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One headless Chromium for the tier."""
    reason = _missing()
    if reason:
        pytest.skip(f"browser tier cannot run: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=_executable(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


class Watched:
    """A page that records any script the application did not ship running in it: a dialog,
    a page error, or `window.__pwned` set (what an injected payload would do)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.csp_violations: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda err: self.errors.append(str(err)))
        page.on(
            "console",
            lambda msg: (
                self.csp_violations.append(msg.text)
                if "Content Security Policy" in msg.text
                else None
            ),
        )

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def pwned(self) -> bool:
        return bool(self.page.evaluate("() => window.__pwned === true"))

    def whereabouts(self) -> str:
        """Where the page is and what it shows (its URL, title and first text), for a failed
        test's report: a browser test that times out waiting for an element otherwise says
        only which element it waited for."""
        try:
            text = self.page.locator("body").inner_text(timeout=2_000)
            return f"url: {self.page.url}\ntitle: {self.page.title()}\n{text[:1500]}"
        except Exception as err:  # a closed or crashed page: say so, never mask the failure
            return f"url: {self.page.url} (its text unreadable: {err!r})"


@pytest.fixture
def context(browser: Any, stack: Stack) -> Iterator[Any]:  # noqa: F811
    """A fresh browser profile (no cookies) per test. It sends the stack's operator key, as
    `/v1` callers do: the dev stack's console takes the same key (decision 0061)."""
    made = browser.new_context(
        base_url=stack.url, viewport={"width": 1100, "height": 900}, extra_http_headers=stack.auth
    )
    made.set_default_timeout(15_000)
    try:
        yield made
    finally:
        made.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed browser test's report says where its page was (`Watched.whereabouts`)."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    watched = getattr(item, "funcargs", {}).get("page")
    if report.when == "call" and report.failed and isinstance(watched, Watched):
        report.sections.append(("where the page was", watched.whereabouts()))


@pytest.fixture
def page(context: Any) -> Watched:
    """A page of that profile, watched for scripts that should never run."""
    return Watched(context.new_page())
