"""The sign-in's pieces that need no network: PKCE as RFC 7636 computes it, the hosted UI's
address, the pool a deployment configures, and the console's config section."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from hookline.config import HooklineConfig
from hookline.console.cognito import UserPool, authorize_url, pkce_challenge
from hookline.settings import Settings


def test_the_code_challenge_is_rfc_7636s() -> None:
    # RFC 7636, appendix B
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert pkce_challenge(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_a_pool_is_configured_only_with_its_id_client_and_domain() -> None:
    assert UserPool.from_settings(Settings(database_url="")) is None
    settings = Settings.from_env(
        {
            "AWS_REGION": "eu-west-1",
            "HOOKLINE_COGNITO_USER_POOL_ID": "eu-west-1_abc",
            "HOOKLINE_COGNITO_CLIENT_ID": "client",
            "HOOKLINE_COGNITO_DOMAIN": "https://ops.auth.eu-west-1.amazoncognito.com/",
        }
    )
    pool = UserPool.from_settings(settings)
    assert pool is not None
    assert pool.issuer == "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc"
    assert pool.jwks_url == f"{pool.issuer}/.well-known/jwks.json"
    url = urlsplit(authorize_url(pool, redirect_uri="https://x/console/callback", state="s",
                                 verifier="v" * 43))  # fmt: skip
    assert f"{url.scheme}://{url.netloc}{url.path}" == (
        "https://ops.auth.eu-west-1.amazoncognito.com/oauth2/authorize"
    )
    query = parse_qs(url.query)
    assert query["scope"] == ["openid email"]
    assert query["code_challenge"] == [pkce_challenge("v" * 43)]


def test_the_console_section_of_the_config() -> None:
    config = HooklineConfig.from_dict({"console": {"admin_email": "ops@example.com"}})
    assert config.console.admin_email == "ops@example.com"
    assert config.console.mfa == "required"
    assert HooklineConfig.from_dict({}).console.admin_email is None
    with pytest.raises(ValueError, match=r"console\.mfa"):
        HooklineConfig.from_dict({"console": {"mfa": "sometimes"}})
