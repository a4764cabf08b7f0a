"""Every figure endpoint, called through gradio_client on 127.0.0.1, returns the direct render."""

from __future__ import annotations

import base64

import pytest

from tabs.bench_client import bench_client
from tabs.figure import render_png
from tabs.registry import all_figures
from tabs.spec import render

pytestmark = pytest.mark.app
CASES = all_figures()


@pytest.fixture(scope="module")
def client(app_url):
    c = bench_client(app_url)
    yield c
    c.close()


def png_of(plot: dict) -> bytes:
    assert plot["type"] == "matplotlib", plot
    head, data = plot["plot"].split(",", 1)
    assert head == "data:image/png;base64", head
    return base64.b64decode(data)


@pytest.mark.parametrize(("tab", "fig"), CASES, ids=[f.name for _, f in CASES])
def test_endpoint_png_equals_direct_render(client, tab, fig):
    args = [tab.control(p).value for p in fig.params]
    plot, table = client.predict(*args, api_name=f"/{fig.name}")
    assert png_of(plot) == render_png(render(fig, tab).figure)
    assert "| metric | value |" in table


def test_bad_input_is_a_clear_error(client):
    tab, fig = CASES[0]
    c = tab.control(fig.params[0])
    args = [tab.control(p).value for p in fig.params]
    args[0] = c.maximum + 1 if hasattr(c, "maximum") else "nope"
    with pytest.raises(Exception) as err:
        client.predict(*args, api_name=f"/{fig.name}")
    assert c.name in str(err.value)
