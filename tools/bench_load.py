"""The HTTP load of ``make bench``: keep-alive connections over loopback, one asyncio thread.

Requests are prepared bytes (each a distinct signed LINE delivery); the client does no JSON or
signing work while it measures, so one Python thread can keep a 2-core machine's server busy.
Latency of one request: from the first byte written to the last byte of its answer read
(for a burst: from the moment the burst starts, connection set-up included, as LINE counts it).
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass
class LoadResult:
    """What one run measured: per-request latencies (seconds), HTTP statuses and wall time (seconds)."""

    latencies: list[float] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    wall_seconds: float = 0.0

    @property
    def throughput(self) -> float:
        """Answered requests per second of wall time."""
        return len(self.latencies) / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def percentile(self, q: float) -> float:
        """The ``q``-quantile (0..1) of the latencies, nearest rank; seconds."""
        ordered = sorted(self.latencies)
        if not ordered:
            return 0.0
        return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered))) - 1))]

    @property
    def non_200(self) -> int:
        """How many answers were not 200 (or never came)."""
        return sum(1 for s in self.statuses if s != 200)


def request_bytes(port: int, body: bytes, signature: str, *, keep_alive: bool = True) -> bytes:
    """One POST / with the LINE signature header, ready to write."""
    head = (f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"X-Line-Signature: {signature}\r\nContent-Length: {len(body)}\r\n"
            f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n")
    return head.encode("ascii") + body


async def _read_answer(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = 0
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status


async def _steady(port: int, requests: list[bytes], connections: int, timeout_seconds: float) -> LoadResult:
    result = LoadResult()
    queue = list(reversed(requests))

    async def one_connection() -> None:
        reader = writer = None
        while queue:
            payload = queue.pop()
            if writer is None:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            started = time.perf_counter()
            try:
                writer.write(payload)
                status = await asyncio.wait_for(_read_answer(reader), timeout_seconds)
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError):
                status = 0
                writer.close()
                reader = writer = None
            result.latencies.append(time.perf_counter() - started)
            result.statuses.append(status)
        if writer is not None:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(one_connection() for _ in range(connections)))
    result.wall_seconds = time.perf_counter() - started
    return result


def steady(port: int, requests: list[bytes], *, connections: int = 16, timeout_seconds: float = 30.0) -> LoadResult:
    """Send ``requests`` over ``connections`` keep-alive connections, each sending its next one when the
    previous answer is in (closed-loop load). Returns latencies, statuses (0: no answer) and wall time."""
    return asyncio.run(_steady(port, requests, connections, timeout_seconds))


async def _burst(port: int, requests: list[bytes], timeout_seconds: float) -> LoadResult:
    result = LoadResult()
    started = time.perf_counter()

    async def one(payload: bytes) -> None:
        writer = None
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(payload)
            status = await asyncio.wait_for(_read_answer(reader), timeout_seconds)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError):
            status = 0
        finally:
            if writer is not None:
                writer.close()
        result.latencies.append(time.perf_counter() - started)
        result.statuses.append(status)

    await asyncio.gather(*(one(p) for p in requests))
    result.wall_seconds = time.perf_counter() - started
    return result


def burst(port: int, requests: list[bytes], *, timeout_seconds: float = 10.0) -> LoadResult:
    """Send every request at once, each on its own new connection (as LINE delivers a burst).
    Each latency is counted from the start of the burst."""
    return asyncio.run(_burst(port, requests, timeout_seconds))
