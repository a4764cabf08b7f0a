"""A bound on the size of every HTTP request body the lab's server accepts.

The lab takes no uploads: its largest legitimate request is one call with every control of a
tab (a prompt of at most 512 bytes among them), well under a kilobyte of JSON. BodyLimit
answers 413 with a message naming the limit to any request whose body is larger than
`max_bytes`, before Gradio parses it, whether the client declares a Content-Length or streams
the body in chunks; other scopes (websockets, lifespan) pass through.

Written here because Starlette and uvicorn offer no body-size limit (uvicorn bounds only
header sizes); it is an ASGI middleware handed to Gradio's FastAPI app by launch(app_kwargs).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY_BYTES = 64 * 1024


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._reject(send, declared)
            return
        body, more, disconnected = bytearray(), True, False
        while more:  # read the whole body (bounded) before the app sees any of it
            message = await receive()
            if message["type"] == "http.disconnect":
                disconnected = True
                break
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await self._reject(send, len(body), at_least=more)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed or disconnected:
                return await receive() if not disconnected else {"type": "http.disconnect"}
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _reject(self, send: Send, size: int, at_least: bool = False) -> None:
        got = f"at least {size:,}" if at_least else f"{size:,}"
        detail = (f"request body too large: {got} bytes; this lab accepts at most "
                  f"{self.max_bytes:,} bytes per request")
        payload = json.dumps({"detail": detail}).encode("utf-8")
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode("ascii")),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": payload})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
