"""The chaos run's secret-leak scan finds a secret or a MAC in a role's log, however the
log line wraps it (the chaos test relies on it reporting 0)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from bench.chaos_audit import secret_leaks

pytestmark = pytest.mark.unit

MAC = base64.b64encode(bytes(range(32))).decode()  # 44 characters, like an HMAC-SHA256
OTHER_MAC = base64.b64encode(bytes(range(1, 33))).decode()
SECRET = "whsec_" + base64.b64encode(b"k" * 24).decode()


@pytest.mark.parametrize(
    "line",
    [
        json.dumps({"level": "INFO", "headers": {"webhook-signature": f"v1,{MAC}"}}),
        f"sig={MAC};next",  # glued to other base64-looking characters on the left
        f"XYZ{MAC}",
        f"secret is {SECRET[6:]}",  # the key without its prefix
        f"secret is {SECRET}",
    ],
)
def test_a_leaked_secret_or_mac_is_found(tmp_path: Path, line: str) -> None:
    (tmp_path / "role").mkdir()
    (tmp_path / "role" / "front.log").write_text(f"ok\n{line}\nok\n")
    found, files, _, looked_for = secret_leaks(tmp_path, [SECRET], [f"v1,{OTHER_MAC} v1,{MAC}"])
    assert found and files == 1
    assert looked_for == 4  # the secret, its key, two MACs


def test_clean_logs_report_nothing(tmp_path: Path) -> None:
    (tmp_path / "moto.log").write_text(json.dumps({"message": "event accepted", "id": "evt_1"}))
    found, files, size, _ = secret_leaks(tmp_path, [SECRET], [f"v1,{MAC}"])
    assert found == set() and files == 1 and size > 0
