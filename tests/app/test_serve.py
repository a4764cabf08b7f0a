"""The Serve tab's streaming endpoint through gradio_client: it streams, its text is the
model's greedy decode, sessions are separate, bad input is a clear error, the server lives on."""

from __future__ import annotations

import html
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.experiments.shipped import model
from tabs.bench_client import bench_client
from tabs.serve import PARAMS, TAB

pytestmark = pytest.mark.app
API = f"/{TAB.run.name}"


def _args(**kw: object) -> list[object]:
    values = {**TAB.defaults(), **kw}
    return [values[p] for p in PARAMS]


def _run(url: str, **kw: object) -> list[tuple]:
    client = bench_client(url)
    try:
        job = client.submit(*_args(**kw), api_name=API)
        job.result(timeout=300)
        return job.outputs()
    finally:
        client.close()


# The endpoint's outputs: status, text, (plot, table) per figure, live panel, result.
STATUS, TEXT, RESULT = 0, 1, -1


def test_streams_and_ends_with_the_greedy_text(app_url):
    prompt = "def main(argv):\n    return "
    updates = _run(app_url, prompt=prompt, n_new=24, draft_len=3)
    assert len(updates) >= 3, "the endpoint must stream several updates"
    assert len(updates[-1]) == 2 + 2 * len(TAB.figures) + 2
    statuses = [u[STATUS] for u in updates]  # set once, then left alone until the end
    assert statuses[0] == "generating…" and statuses[-2:] == ["drawing the figures…", "done"]
    assert all(s in ("generating…", None) or not isinstance(s, str) for s in statuses[:-2])
    assert updates[-2][RESULT] == updates[-1][RESULT]  # the text was whole before the figures
    want = model().generate(prompt.encode(), 24)
    result = updates[-1][RESULT]
    assert bytes(result["generated"]) == want and result["done"]  # the bytes themselves
    assert [len(u[RESULT]["generated"]) for u in updates] == sorted(
        len(u[RESULT]["generated"]) for u in updates)  # the text only grows
    assert prompt.replace("\n", "") in html.unescape(updates[-1][TEXT]).replace("\n", "")


def test_two_sessions_get_their_own_outputs(app_url):
    prompts = ["import os\nimport ", "The default value is "]
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda p: _run(app_url, prompt=p, n_new=16, draft_len=0), prompts))
    for prompt, updates in zip(prompts, runs, strict=True):
        last = updates[-1][TEXT]
        assert html.escape(prompt) in last
        other = prompts[1 - prompts.index(prompt)]
        assert html.escape(other) not in last
        assert bytes(updates[-1][RESULT]["generated"]) == model().generate(prompt.encode(), 16)
        assert updates[-1][RESULT]["reused_tokens"] == 0  # a fresh session reused nothing


@pytest.mark.parametrize(("field", "kw"), [
    ("prompt", {"prompt": ""}),
    ("draft_len", {"draft_len": 99}),
    ("routing", {"routing": "yes"}),
])
def test_bad_input_names_the_field_and_the_server_keeps_serving(app_url, field, kw):
    client = bench_client(app_url)
    try:
        with pytest.raises(Exception, match=field):
            client.predict(*_args(**kw), api_name=API)
        plot, table = client.predict(*[TAB.control(p).value for p in PARAMS],
                                     api_name="/serve_memory")
        assert "| metric | value |" in table
    finally:
        client.close()


def test_the_run_and_a_live_panel_never_touch_the_render_cache(app_url, monkeypatch):
    """A run draws its own session's snapshots, a live panel measures now: neither is a pure
    function of its parameters, so neither may be served from (or stored in) the cache a class
    shares. Every cache lookup made while they run is recorded: none may be theirs."""
    from tabs.prefix import TAB as PREFIX
    from tabs.render_cache import RENDERS

    looked_up: list[tuple] = []
    get = RENDERS.get
    monkeypatch.setattr(RENDERS, "get", lambda key, compute: looked_up.append(key) or get(
        key, compute))
    updates = _run(app_url, prompt="import os\nimport ", n_new=12, draft_len=2)
    assert bytes(updates[-1][RESULT]["generated"]) == model().generate(b"import os\nimport ", 12)
    client = bench_client(app_url)
    try:
        assert "Saved:" in client.predict(3, "hit", api_name=f"/{PREFIX.live.name}")
    finally:
        client.close()
    ours = {f.name for f in TAB.figures} | {PREFIX.live.name}
    assert not [k for k in looked_up if k[0].name in ours]
    # the recorder sees the lookups it should: a Serve figure through its own endpoint
    client = bench_client(app_url)
    try:
        client.predict(*[TAB.control(p).value for p in PARAMS], api_name="/serve_memory")
    finally:
        client.close()
    assert [k[0].name for k in looked_up if k[0].name in ours] == ["serve_memory"]
