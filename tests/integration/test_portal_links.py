"""Portal links and portal settings through their services: scoped to the caller's tenant,
audited, and held to strict shapes (what reaches CSS and the CSP header)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from hookline.config import HooklineConfig
from hookline.errors import BadRequest, NotFound, Unauthorized
from hookline.management.access import OPERATOR, Caller
from hookline.management.portal_links import (
    create_portal_link,
    get_portal_settings,
    set_portal_settings,
)
from hookline.sessions import LINK, session_key, verify
from hookline.settings import Settings
from tests.support import operator

pytestmark = pytest.mark.integration

OPERATOR_CALLER = Caller("test-operator", OPERATOR)


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(database_url=database_url, local_key_file=str(tmp_path / "master.key"))


@pytest.fixture
def tenants(db) -> tuple[str, str]:
    config = HooklineConfig()
    a = operator.add_tenant(db, config, name="a", group=None)["id"]
    b = operator.add_tenant(db, config, name="b", group=None)["id"]
    return a, b


def audit_actions(db, tenant: str) -> list[str]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT action FROM audit_log WHERE object_id = %s ORDER BY id", (tenant,)
        ).fetchall()
    return [r["action"] for r in rows]


def test_a_link_opens_only_its_tenant_and_is_audited(db, settings, tenants) -> None:
    a, b = tenants
    # When an operator makes a link for A
    made = create_portal_link(
        db, settings, OPERATOR_CALLER, a, own_url="https://hooks.example", ttl=timedelta(hours=1)
    )
    # Then it carries A's session, and the making is audited
    token = made["url"].split("token=", 1)[1]
    assert made["url"].startswith("https://hooks.example/portal/login?token=")
    assert verify(session_key(settings), LINK, token).tenant_id == a
    assert audit_actions(db, a) == ["create_portal_link"]
    # And a caller scoped to A cannot make one for B (answered as unknown)
    with pytest.raises(NotFound):
        create_portal_link(
            db, settings, Caller("key:a", a), b, own_url="https://x", ttl=timedelta(hours=1)
        )
    with pytest.raises(BadRequest, match="ttl"):
        create_portal_link(
            db, settings, OPERATOR_CALLER, a, own_url="https://x", ttl=timedelta(days=2)
        )


def test_portal_settings_are_an_operators_and_strictly_shaped(db, tenants) -> None:
    a, _ = tenants
    assert get_portal_settings(db, OPERATOR_CALLER, a)["frame_ancestors"] == []
    with pytest.raises(Unauthorized):
        set_portal_settings(db, Caller("key:a", a), a, {"accent": "#000000"})
    hostile = [
        {"accent": "red;}body{display:none"},
        {"logo_url": "javascript:alert(1)"},
        {"frame_ancestors": ["https://ok.example; script-src *"]},
        {"frame_ancestors": ["http://plain.example"]},
        {"frame_ancestors": [f"https://s{i}.example" for i in range(6)]},
    ]
    for body in hostile:
        with pytest.raises(BadRequest):
            set_portal_settings(db, OPERATOR_CALLER, a, body)
    assert audit_actions(db, a) == []
    saved = set_portal_settings(
        db, OPERATOR_CALLER, a,
        {"title": "A", "accent": "#AA3300", "frame_ancestors": ["https://App.example/"]},
    )  # fmt: skip
    assert saved["accent"] == "#aa3300" and saved["frame_ancestors"] == ["https://app.example"]
    assert get_portal_settings(db, Caller("key:a", a), a)["title"] == "A"
    assert audit_actions(db, a) == ["set_portal_settings"]
