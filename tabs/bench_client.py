"""A gradio_client Client for the benchmarks, costing what a browser's requests cost.

gradio_client opens a new httpx client for each request, and each one builds an SSL context
from certifi's CA bundle, even for a plain http:// URL: measured on this 2-core host, 38-40 ms
of client CPU a call out of 40, against 2.4-2.5 ms with one context built once and shared
(`python -m tabs.bench_client URL`). A browser keeps its connection and builds nothing per
request, so without this the bench's client processes took most of the cores the server
shares with them and set the latency the bench reports. The shared context verifies
certificates exactly as gradio_client's default does; on http:// it is never used.
"""

from __future__ import annotations

import ssl
from functools import cache


@cache
def _context() -> ssl.SSLContext:
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def bench_client(url: str):
    """A gradio_client Client for `url` whose requests share one SSL context."""
    from gradio_client import Client

    return Client(url, verbose=False, ssl_verify=_context())


def _compare(url: str, api_name: str, calls: int = 100) -> None:
    import os
    import time

    from gradio_client import Client

    for label, client in (("gradio_client's default", Client(url, verbose=False)),
                          ("one shared SSL context", bench_client(url))):
        client.predict(api_name=api_name)
        t0, c0 = time.perf_counter(), os.times()
        for _ in range(calls):
            client.predict(api_name=api_name)
        c1 = os.times()
        print(f"{label}: {(time.perf_counter() - t0) / calls * 1e3:.1f} ms a call, client CPU "
              f"{(c1.user + c1.system - c0.user - c0.system) / calls * 1e3:.1f} ms a call")
        client.close()


if __name__ == "__main__":
    import sys

    from tabs.registry import REGISTRY

    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m tabs.bench_client URL  (a running lab)")
    _compare(sys.argv[1], f"/{REGISTRY[0].figures[0].name}")
