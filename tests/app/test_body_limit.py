"""Request bodies are bounded (tabs/body_limit.py): an oversized call gets 413 and a message
naming the limit, declared or streamed in chunks, before Gradio parses it; calls under the
bound, and the server, keep working."""

from __future__ import annotations

import asyncio
import http.client
import json
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from tabs.body_limit import MAX_BODY_BYTES, BodyLimit
from tabs.registry import REGISTRY

pytestmark = pytest.mark.app


def _call(url: str, body: bytes, chunked: bool = False) -> tuple[int, str]:
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    api = REGISTRY[0].figures[0].name
    headers = {"Content-Type": "application/json"}
    if chunked:
        def chunks():
            for i in range(0, len(body), 8192):
                yield body[i:i + 8192]
        conn.request("POST", f"/gradio_api/call/{api}", body=chunks(), headers=headers,
                     encode_chunked=True)
    else:
        conn.request("POST", f"/gradio_api/call/{api}", body=body, headers=headers)
    r = conn.getresponse()
    text = r.read().decode(errors="replace")
    conn.close()
    return r.status, text


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_an_oversized_body_gets_413_naming_the_limit(app_url, chunked):
    body = json.dumps({"data": ["x" * (MAX_BODY_BYTES + 10)]}).encode()
    status, text = _call(app_url, body, chunked)
    assert status == 413, text[:300]
    assert f"at most {MAX_BODY_BYTES:,} bytes" in json.loads(text)["detail"]


def test_a_body_under_the_bound_reaches_gradio(app_url):
    tab = REGISTRY[0]
    good = [tab.control(p).value for p in tab.figures[0].params]
    status, text = _call(app_url, json.dumps({"data": good}).encode(), chunked=True)
    assert status == 200 and "event_id" in text, text[:300]


def test_middleware_passes_the_body_through_unchanged():
    """Direct ASGI check: the app sees exactly the bytes sent, in one message, then the
    client's own later messages (a disconnect)."""
    seen: list[dict] = []

    async def app(scope, receive, send):
        seen.append(await receive())
        seen.append(await receive())

    parts = [{"type": "http.request", "body": b"ab", "more_body": True},
             {"type": "http.request", "body": b"cd", "more_body": False},
             {"type": "http.disconnect"}]

    async def receive():
        return parts.pop(0)

    async def send(message):
        raise AssertionError(f"nothing may be sent: {message}")

    # in a thread of its own: after the browser tests, playwright's sync API holds this
    # thread's event loop running (asyncio.run refuses then: seen when one process ran both)
    middleware = BodyLimit(app, max_bytes=4)({"type": "http", "headers": []}, receive, send)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, middleware).result()
    assert seen == [{"type": "http.request", "body": b"abcd", "more_body": False},
                    {"type": "http.disconnect"}]
