"""Small pieces every aiohttp endpoint of the service uses: JSON answers and server-sent events."""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

#: Seconds of quiet after which an event stream sends a comment (proxies close idle streams).
KEEP_ALIVE = 15.0


def json_response(data: Any, status: int = 200) -> web.Response:
    """``data`` as a JSON answer (orjson; values it does not know as their ``str``)."""
    return web.Response(body=orjson.dumps(data, default=str), status=status, content_type="application/json")


def json_error(status: type[web.HTTPException], message: str) -> web.HTTPException:
    """An HTTP error to raise with ``{"error": message}`` as its body."""
    return status(text=orjson.dumps({"error": message}).decode(), content_type="application/json")


async def event_stream(request: web.Request, queue: asyncio.Queue[tuple[str, Any]],
                       first: tuple[str, Any] | None = None) -> web.StreamResponse:
    """Serve ``(event, data)`` items of ``queue`` as server-sent events until the client goes.

    ``first`` is sent before the queue's items (what the client must know on connecting).
    """
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    try:
        if first is not None:
            await _send(response, *first)
        while True:
            try:
                event, data = await asyncio.wait_for(queue.get(), KEEP_ALIVE)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            await _send(response, event, data)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    return response


async def _send(response: web.StreamResponse, event: str, data: Any) -> None:
    await response.write(b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data, default=str) + b"\n\n")
