"""The lab in class mode (`python app.py --class`) through gradio_client: sessions generating at
once each receive exactly HybridLM.generate's bytes for their own prompt (routing off), see
their own text and the room's counts, never another session's prompt; a cancelled run leaves
the room serving the others."""

from __future__ import annotations

import html
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.experiments.shipped import model
from tabs.bench_client import bench_client
from tabs.serve import PARAMS, TAB

pytestmark = pytest.mark.app
API = f"/{TAB.run.name}"
PROMPTS = ["import os\nimport ", "def main(argv):\n    for ", '{"id": 1821, "name": "',
           "class Cache:\n    def "]


@pytest.fixture(scope="module")
def class_url():
    from app import build_app, launch_kwargs
    from core.experiments.serve import serve_class, stop_class

    serve_class()
    demo = build_app(class_engine=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True,
                            quiet=True, **launch_kwargs(max_threads=80))
    try:
        yield url
    finally:
        demo.close()
        stop_class()


def _args(**kw: object) -> list[object]:
    values = {**TAB.defaults(), **kw}
    return [values[p] for p in PARAMS]


def _run(url: str, prompt: str, draft_len: int) -> list[tuple]:
    client = bench_client(url)
    try:
        job = client.submit(*_args(prompt=prompt, n_new=24, draft_len=draft_len), api_name=API)
        job.result(timeout=300)
        return job.outputs()
    finally:
        client.close()


def test_sessions_at_once_each_get_their_solo_bytes(class_url):
    with ThreadPoolExecutor(len(PROMPTS)) as pool:
        runs = list(pool.map(lambda ip: _run(class_url, ip[1], (0, 2)[ip[0] % 2]),
                             enumerate(PROMPTS)))
    for prompt, updates in zip(PROMPTS, runs, strict=True):
        final = updates[-1]
        assert bytes(final[-1]["generated"]) == model().generate(prompt.encode(), 24)
        text = final[1]
        assert html.escape(prompt) in text and "The class engine" in text
        assert not any(html.escape(p) in text for p in PROMPTS if p != prompt)
    assert max(int(t) for u in runs for x in u
               for t in [x[1].split(" requests in the batch")[0].rsplit(" ", 1)[-1]]
               if "requests in the batch" in x[1]) >= 2, "the sessions never shared a batch"


def test_a_cancelled_run_leaves_the_room_serving(class_url):
    client = bench_client(class_url)
    try:
        job = client.submit(*_args(prompt=PROMPTS[0], n_new=200, draft_len=0), api_name=API)
        for _ in job:  # its first update: it is in the batch
            break
        job.cancel()
    finally:
        client.close()
    final = _run(class_url, PROMPTS[1], 0)[-1]
    assert bytes(final[-1]["generated"]) == model().generate(PROMPTS[1].encode(), 24)


def test_the_serve_figures_draw_in_class_mode(class_url):
    """What the Serve tab shows as it opens (each figure's last snapshot of a run at the page's
    values) draws in class mode too: the room's seats have no run of their own, and the opening
    figures once asked a seat for one ("'Seat' object has no attribute 'close'" on every page)."""
    client = bench_client(class_url)
    try:
        for fig in TAB.figures:
            plot, table = client.predict(*[TAB.defaults()[p] for p in fig.params],
                                         api_name=f"/{fig.name}")
            assert "Not drawn" not in table, (fig.name, table)
    finally:
        client.close()
