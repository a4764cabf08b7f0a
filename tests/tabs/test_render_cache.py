"""The render cache's slots: renders run RENDER_SLOTS at a time, and a hit never waits for one.

Pinned with figures whose renders block until released: with every slot held by a render in
progress, a figure already rendered is answered at once, a join of a render in flight waits
for that render only, and one more render does not start until a slot frees.
"""

from __future__ import annotations

import threading

import matplotlib.pyplot as plt
import pytest

from tabs import render_cache as rc
from tabs.figure import FigureResult
from tabs.spec import FigureSpec

WAIT_S = 10.0  # how long a step may take before the test calls it stuck


def _figure(name: str, gate: threading.Event | None, started: list[str]) -> FigureSpec:
    def draw() -> FigureResult:
        started.append(name)
        if gate is not None:
            assert gate.wait(WAIT_S), f"{name} was never released"
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        return FigureResult(fig, {"n": 1})
    return FigureSpec(name=name, title=name, fn=draw, params=())


def _get(fig: FigureSpec) -> rc.Rendered:
    return rc.RENDERS.get(rc.key(fig, {}, False), lambda: rc.render_now(fig, {}, False))


def _in_thread(fig: FigureSpec) -> tuple[threading.Thread, list]:
    out: list = []
    t = threading.Thread(target=lambda: out.append(_get(fig)), daemon=True)
    t.start()
    return t, out


@pytest.fixture
def clean_cache():
    rc.RENDERS.clear()
    yield
    rc.RENDERS.clear()


def test_a_hit_never_waits_for_a_render_slot(clean_cache):
    started: list[str] = []
    cached = _figure("cached", None, started)
    _get(cached)
    gate = threading.Event()
    slow = [_figure(f"slow{i}", gate, started) for i in range(rc.RENDER_SLOTS)]
    waiting = _figure("one more", None, started)
    try:
        threads = [_in_thread(f) for f in slow]
        deadline = threading.Event()
        for _ in range(int(WAIT_S / 0.01)):
            if len(started) == 1 + rc.RENDER_SLOTS:
                break
            deadline.wait(0.01)
        assert sorted(started[1:]) == sorted(f.name for f in slow), "every slot holds a render"
        joiner, joined = _in_thread(slow[0])  # a join of a render in flight
        extra, extra_out = _in_thread(waiting)
        hit, hit_out = _in_thread(cached)
        hit.join(WAIT_S)
        assert hit_out, "a cached figure waited for a render slot"
        assert "one more" not in started, "a render started beyond RENDER_SLOTS"
        assert not joined, "a join returned before the render it joined"
    finally:
        gate.set()
    for t, out in [*threads, (joiner, joined), (extra, extra_out)]:
        t.join(WAIT_S)
        assert out, "a render never finished"
    assert started.count("slow0") == 1 and "one more" in started
    assert joined[0] is threads[0][1][0]
