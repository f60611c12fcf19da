"""The alarm topic's chat subscriber posts each alarm to a chat webhook (a loopback server
stands in for Slack), and raises when the post fails so Lambda retries the notification."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from functions.alarm_chat import handler

pytestmark = pytest.mark.integration

ALARM = {
    "AlarmName": "Hookline-MonitoringFanoutHeartbeat",
    "AlarmDescription": "The fanout function has not run for 5 minutes.",
    "NewStateValue": "ALARM",
    "NewStateReason": "Threshold Crossed: no datapoints were received.",
    "Region": "EU (Ireland)",
}


class Chat:
    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.status = 200


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[Chat]:
    received = Chat()

    class Webhook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            received.posts.append(json.loads(body))
            self.send_response(received.status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Webhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(
        "HOOKLINE_ALARM_WEBHOOK_URL", f"http://127.0.0.1:{server.server_address[1]}/hook"
    )
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()


def sns_event(message: str) -> dict[str, Any]:
    return {"Records": [{"Sns": {"Message": message}}]}


def test_an_alarm_reaches_the_chat_with_its_state_name_and_meaning(chat: Chat) -> None:
    # When the topic delivers an alarm notification
    answer = handler.lambda_handler(sns_event(json.dumps(ALARM)), None)
    # Then one message reaches the chat, saying which alarm, its state and what it means
    assert answer == {"posted": 1}
    (post,) = chat.posts
    assert post["text"].startswith("[ALARM] Hookline-MonitoringFanoutHeartbeat")
    assert "has not run for 5 minutes" in post["text"]
    assert post["Content"] == post["text"]  # Chime's field


def test_a_failed_post_raises_so_lambda_retries(chat: Chat) -> None:
    chat.status = 500
    with pytest.raises(OSError):
        handler.lambda_handler(sns_event(json.dumps(ALARM)), None)
