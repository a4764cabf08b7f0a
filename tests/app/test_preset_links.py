"""Every preset of every tab, through the running server: the preset's share link parses back
to exactly its values, and the figure the preset changes, called through its endpoint with
the values read from that link, is the PNG the render cache holds for the preset's values (the
first figure it changes). The cache's entry for given values is that figure's direct render
(tests/app/test_api.py, every figure through its endpoint; tests/figures/test_presets.py draws
every figure each preset changes directly), so this test does not render each case a second
time. (Chromium opens one preset and one share link in tests/e2e; this covers the rest without
a browser per case.)
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from tabs.bench_client import bench_client
from tabs.registry import REGISTRY
from tabs.render_cache import rendered
from tabs.share import link_query, parse_query
from tests.app.test_api import png_of

pytestmark = pytest.mark.app
CASES = [(t, p) for t in REGISTRY for p in t.presets]


@pytest.fixture(scope="module")
def client(app_url):
    c = bench_client(app_url)
    yield c
    c.close()


@pytest.mark.parametrize(("tab", "preset"), CASES, ids=[f"{t.id}-{p.name}" for t, p in CASES])
def test_preset_link_restores_its_figures_through_the_server(client, tab, preset):
    values = {**tab.defaults(), **preset.values}
    restored = parse_query(dict(parse_qsl(link_query(tab, values))))
    assert restored.tab is tab and restored.notes == ()
    assert restored.values == values
    touched = [f for f in tab.figures if set(f.params) & set(preset.values)]
    assert touched
    fig = touched[0]
    plot, _ = client.predict(*[restored.values[p] for p in fig.params], api_name=f"/{fig.name}")
    assert png_of(plot) == rendered(fig, tab, values).png(), fig.name
