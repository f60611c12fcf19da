"""A fast HTTP subscriber for benchmarks: its own process, one asyncio loop, HTTP/1.1
keep-alive, every POST answered `200 {"ok": true}` at once.

It runs in a separate process so that it never competes for the measured process's GIL,
and it parses only what it must (the head's end and Content-Length), so that what a
benchmark measures is the client, not the subscriber. `GET /stats` answers
`{"requests": N}` (POSTs served so far). Plain `http://127.0.0.1:<port>` only.

    with running_sink() as sink:
        sink.url("/hook/0"); ...; sink.requests()

Run directly (`python bench/sink.py`) it prints its port and serves until stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OK_BODY = b'{"ok": true}'
OK_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b"Content-Length: " + str(len(OK_BODY)).encode() + b"\r\n\r\n" + OK_BODY
)
MAX_HEAD = 64 * 1024


class SinkProtocol(asyncio.Protocol):
    """One connection: requests parsed from a buffer, answered in order."""

    served = 0  # POSTs answered, over every connection of the process

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport to answer on."""
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        """Answer every complete request in the buffer."""
        buffer = self.buffer
        buffer += data
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD and self.transport is not None:
                    self.transport.close()
                return
            head = bytes(buffer[:end]).lower()
            size = _content_length(head)
            total = end + 4 + size
            if len(buffer) < total:
                return
            del buffer[:total]
            assert self.transport is not None
            if head.startswith(b"get /stats"):
                body = json.dumps({"requests": SinkProtocol.served}).encode()
                self.transport.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                    + body
                )
            else:
                SinkProtocol.served += 1
                self.transport.write(OK_RESPONSE)


def _content_length(head: bytes) -> int:
    at = head.find(b"\r\ncontent-length:")
    if at < 0:
        return 0
    start = at + len(b"\r\ncontent-length:")
    stop = head.find(b"\r\n", start)
    return int(head[start : stop if stop >= 0 else len(head)].strip())


async def serve() -> None:
    """Listen on a free loopback port, print it, serve until stdin closes."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(SinkProtocol, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # the parent closes stdin to stop us
    server.close()


class Sink:
    """The parent's handle on a sink process."""

    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.port = port

    def url(self, path: str) -> str:
        """The URL of a path on this sink."""
        return f"http://127.0.0.1:{self.port}{path}"

    def requests(self) -> int:
        """POSTs served so far."""
        import httpx

        return int(httpx.get(self.url("/stats"), timeout=5).json()["requests"])


@contextmanager
def server_process(script: str | Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """Run `script`, a loopback server that prints its port on its first line and stops when
    its stdin closes; (the process, its port) for the duration of the block."""
    process = subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield process, int(process.stdout.readline())
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def running_sink() -> Iterator[Sink]:
    """A sink process for the duration of the block."""
    with server_process(__file__) as (process, port):
        yield Sink(process, port)


if __name__ == "__main__":
    asyncio.run(serve())
