"""Fuzz every endpoint through raw HTTP (the Gradio call API), where NaN, infinities, huge
numbers, wrong types, over-long strings and missing fields reach the server: each bad call is
answered with an error event whose message names the parameter (or, for a malformed call, the
count of values), never a 500 and never a hang; afterwards correct calls still work."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request

import pytest

from tabs.controls import Check, Choice, Slider, Text
from tabs.registry import REGISTRY

pytestmark = pytest.mark.app

BAD = ["NaN", "Infinity", "-Infinity", "1e308", str(10**30), '"seven"', "null", "[]", "{}",
       json.dumps("x" * 20_000), "true"]  # over-long, under the body bound
ENDPOINTS = [(t, f.name, f.params) for t in REGISTRY for f in t.figures]
ENDPOINTS += [(t, t.run.name, t.run.params) for t in REGISTRY if t.run is not None]
ENDPOINTS += [(t, t.live.name, t.live.params) for t in REGISTRY if t.live is not None]


def _post(url: str, api: str, body: str) -> tuple[int, str]:
    req = urllib.request.Request(f"{url}gradio_api/call/{api}", data=body.encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            event = json.loads(r.read())["event_id"]
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    with urllib.request.urlopen(f"{url}gradio_api/call/{api}/{event}", timeout=120) as r:
        return 200, r.read().decode(errors="replace")


def _good(tab, params) -> list[object]:
    return [tab.control(p).value for p in params]


def _is_bad_for(c, raw: str) -> bool:
    """Whether the JSON value raw is invalid for control c (true is a valid Check value)."""
    if isinstance(c, Check):
        return raw != "true"
    if isinstance(c, Text):
        return raw != '"seven"'
    return True


@pytest.mark.parametrize(("tab", "api", "params"), ENDPOINTS, ids=[e[1] for e in ENDPOINTS])
def test_bad_calls_get_clear_errors_then_good_calls_work(app_url, tab, api, params):
    rng = random.Random(api)
    good = _good(tab, params)
    for name in rng.sample(list(params), min(2, len(params))):
        c = tab.control(name)
        for raw in rng.sample([b for b in BAD if _is_bad_for(c, b)], 2):
            data = [raw if p == name else json.dumps(v) for p, v in zip(params, good,
                                                                         strict=True)]
            status, text = _post(app_url, api, '{"data": [' + ", ".join(data) + "]}")
            assert status != 500 and status in (200, 422), (api, name, raw, status, text)
            if status == 200:
                assert "event: error" in text, (api, name, raw, text[:300])
                assert name in text, f"{api}: {name}={raw[:20]} gave {text[:300]}"
    if params:
        status, text = _post(app_url, api, json.dumps({"data": good[:-1]}))
        assert status in (200, 422) and ("input values" in text or status == 422), text[:300]
    status, text = _post(app_url, api, json.dumps({"data": "not a list"}))
    assert status == 422, text[:300]


FIRSTS = [(t, t.figures[0]) for t in REGISTRY]


@pytest.mark.parametrize(("tab", "fig"), FIRSTS, ids=[f.name for _, f in FIRSTS])
def test_correct_calls_still_work_after_the_fuzz(app_url, tab, fig):
    status, text = _post(app_url, fig.name, json.dumps({"data": _good(tab, fig.params)}))
    assert status == 200 and "event: complete" in text, text[:300]


def test_every_control_kind_is_fuzzed():
    kinds = {type(c) for t, _, ps in ENDPOINTS for c in (t.control(p) for p in ps)}
    assert {Slider, Choice, Text, Check} <= kinds
