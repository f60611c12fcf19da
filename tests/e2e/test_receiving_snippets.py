"""docs/receiving.md's Python and Node receivers, run as written, receiving real deliveries from
a running `hookline dev`: they accept what Hookline signs (also while a rotated secret's two
signatures ride along) and refuse what it did not sign."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hookline_dev.localpg import free_port
from tests.e2e.conftest import Stack, wait_until

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "receiving.md"
NODE_MODULES = REPO / "clients" / "typescript" / "node_modules"


def snippet(name: str) -> str:
    """The code block under `<!-- snippet: name -->` in docs/receiving.md."""
    found = re.search(
        rf"<!-- snippet: {name} -->\s*```\w+\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL
    )
    assert found, f"docs/receiving.md has no snippet {name!r}"
    return found.group(1)


def command(language: str, path: Path) -> list[str]:
    if language == "python":
        return [sys.executable, str(path)]
    node = shutil.which("node")
    assert node, "node is required (Node 20: .ci/run installs it)"
    return [node, str(path)]


@pytest.fixture(params=["python", "node"])
def language(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Receiver:
    """A snippet running as its own process on a loopback port."""

    def __init__(self, language: str, workdir: Path, secret: str, port: int) -> None:
        script = workdir / ("receiver.py" if language == "python" else "receiver.cjs")
        script.write_text(snippet(language))
        self.output = workdir / "out.txt"
        self.url = f"http://127.0.0.1:{port}/webhooks"
        env = {
            "PATH": "/usr/bin:/bin",
            "PORT": str(port),
            "HOOKLINE_SIGNING_SECRET": secret,
            "NODE_PATH": str(NODE_MODULES),  # where `npm install standardwebhooks` put it
        }
        with open(self.output, "wb") as out:
            self.process = subprocess.Popen(
                command(language, script), env=env, stdout=out, stderr=subprocess.STDOUT
            )
        wait_until(self.listening, timeout=30, what=f"the {language} receiver to listen")

    def listening(self) -> bool:
        assert self.process.poll() is None, self.output.read_text()
        try:
            httpx.get(self.url, timeout=1)
        except httpx.TransportError:
            return False
        return True

    def received(self) -> list[str]:
        """The webhook-ids the receiver acted on."""
        return re.findall(r"^received (dlv_\w+)", self.output.read_text(), flags=re.MULTILINE)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture
def setup(stack: Stack, language: str, tmp_path: Path) -> Iterator[tuple[Receiver, dict, str]]:
    """A tenant with an endpoint whose receiver is the snippet, holding the endpoint's secret."""
    tenant = stack.tenant(name=f"receiving-{language}")
    port = free_port()
    endpoint = stack.endpoint(tenant, f"http://127.0.0.1:{port}/webhooks")
    receiver = Receiver(language, tmp_path, endpoint["secret"], port)
    try:
        yield receiver, endpoint, tenant
    finally:
        receiver.stop()


def publish(stack: Stack, tenant: str, n: int) -> str:
    answer = httpx.post(
        f"{stack.url}/v1/events",
        json={"tenant_id": tenant, "type": "invoice.paid", "payload": {"n": n}},
        headers=stack.auth,
    )
    assert answer.status_code in (200, 201, 202), answer.text
    return str(answer.json()["id"])


def delivered(stack: Stack, event_id: str) -> dict | None:
    rows = stack.deliveries(event_id=event_id)
    return rows[0] if rows and rows[0]["state"] in ("delivered", "failed", "dead") else None


def test_the_guide_s_receiver_accepts_hookline_deliveries(stack: Stack, setup) -> None:
    receiver, _endpoint, tenant = setup
    # When Hookline delivers an event to the receiver from docs/receiving.md
    event_id = publish(stack, tenant, 1)
    # Then the receiver verifies it and answers 2xx: the delivery is done, in one attempt
    row = wait_until(lambda: delivered(stack, event_id), timeout=30, what="the delivery")
    assert row["state"] == "delivered" and row["attempt_count"] == 1
    assert receiver.received() == [row["id"]]


def test_the_guide_s_receiver_accepts_both_signatures_of_a_rotation(stack: Stack, setup) -> None:
    receiver, endpoint, tenant = setup
    # Given the endpoint's secret rotated, while the receiver still holds the old one
    rotated = httpx.post(
        f"{stack.url}/v1/endpoints/{endpoint['id']}/rotate-secret", headers=stack.auth
    )
    assert rotated.status_code == 200, rotated.text
    # When Hookline delivers (signed by the new secret and, for the overlap, the old one)
    event_id = publish(stack, tenant, 2)
    # Then the receiver still accepts it
    row = wait_until(lambda: delivered(stack, event_id), timeout=30, what="the delivery")
    assert row["state"] == "delivered"
    assert receiver.received() == [row["id"]]


def test_the_guide_s_receiver_refuses_what_hookline_did_not_sign(stack: Stack, setup) -> None:
    receiver, _endpoint, _tenant = setup
    # Given a request signed with another secret, and one not signed at all
    body = b'{"forged": true}'
    forged = {
        "webhook-id": "dlv_forged",
        "webhook-timestamp": str(int(time.time())),
        "webhook-signature": "v1,Zm9yZ2VkIHNpZ25hdHVyZSBvZiB0aGlydHktdHdvIGJ5dGVzISE=",
        "content-type": "application/json",
    }
    # When they reach the receiver
    answer = httpx.post(receiver.url, content=body, headers=forged)
    unsigned = httpx.post(receiver.url, content=body, headers={"content-type": "application/json"})
    # Then it refuses both with 401 (which Hookline does not retry) and acts on neither
    assert answer.status_code == 401 and unsigned.status_code == 401
    assert receiver.received() == []
