"""Portal links and sessions: signed, scoped to one tenant, refused when forged or expired."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hookline.errors import SessionInvalid
from hookline.sessions import LINK, SESSION, csrf_ok, csrf_token, sign, verify

KEY = b"k" * 32
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_a_link_carries_its_tenant_until_it_expires() -> None:
    token = sign(KEY, LINK, "ten_a", NOW + timedelta(hours=1))
    found = verify(KEY, LINK, token, now=NOW)
    assert found.tenant_id == "ten_a"
    with pytest.raises(SessionInvalid, match="expired"):
        verify(KEY, LINK, token, now=NOW + timedelta(hours=1, seconds=1))


@pytest.mark.parametrize(
    "tamper",
    [
        lambda t: t.replace("ten_a", "ten_b"),  # another tenant's id edited in
        lambda t: t[:-2] + ("AA" if not t.endswith("AA") else "BB"),  # the MAC changed
        lambda t: t.replace(t.split(".")[2], str(int(t.split(".")[2]) + 3600)),  # longer life
        lambda t: "garbage",
    ],
)
def test_an_edited_link_is_refused(tamper: object) -> None:
    token = sign(KEY, LINK, "ten_a", NOW + timedelta(hours=1))
    with pytest.raises(SessionInvalid, match="not a valid"):
        verify(KEY, LINK, tamper(token), now=NOW)  # type: ignore[operator]


def test_a_link_is_not_a_session_and_another_key_is_refused() -> None:
    token = sign(KEY, LINK, "ten_a", NOW + timedelta(hours=1))
    with pytest.raises(SessionInvalid):
        verify(KEY, SESSION, token, now=NOW)
    with pytest.raises(SessionInvalid):
        verify(b"x" * 32, LINK, token, now=NOW)


def test_a_csrf_token_belongs_to_one_session() -> None:
    token = csrf_token(KEY, "session-1")
    assert csrf_ok(KEY, "session-1", token)
    assert not csrf_ok(KEY, "session-2", token)
    assert not csrf_ok(KEY, "session-1", None)
    assert not csrf_ok(KEY, None, token)
