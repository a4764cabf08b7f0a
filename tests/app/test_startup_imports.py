"""Building the app imports no torch and no figure module: the tabs name their figures lazily
(tabs/lazy.py) and declare their controls with torch-free constants, so torch loads after the
first page (the startup target: tabs/startup_bench.py).

Checked in a fresh interpreter, since this test session has imported both long ago: after
`import app; app.build_app()`, torch is not in sys.modules; every function a TabSpec names
(figures, live panels, the Serve run) is a Lazy whose module is not loaded; and the only tab
submodules loaded are the tabs' torch-free `common` modules (their shared look and ranges).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.app

SCRIPT = """
import json, sys
import app
app.build_app()
from tabs.lazy import Lazy
from tabs.registry import REGISTRY
named, eager = set(), []
for tab in REGISTRY:
    fns = [f.fn for f in tab.figures] + ([tab.live.fn] if tab.live else [])
    if tab.run:
        r = tab.run
        fns += [r.session, r.close, r.start, r.final, r.text, r.live, *r.draws.values()]
    for fn in fns:
        if isinstance(fn, Lazy):
            named.add(fn.module)
        else:
            eager.append(f"{tab.id}: {fn!r}")
tab_packages = {f"tabs.{tab.id}" for tab in REGISTRY}
print(json.dumps({
    "torch": sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")),
    "eager": eager,
    "named": sorted(named),
    "named_loaded": sorted(m for m in named if m in sys.modules),
    "tab_modules": sorted(m for m in sys.modules if m.rpartition(".")[0] in tab_packages),
}))
"""


@pytest.fixture(scope="module")
def after_build() -> dict[str, list[str]]:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_building_the_app_leaves_torch_unloaded(after_build):
    assert after_build["torch"] == []


def test_every_tab_function_is_named_lazily_and_not_loaded(after_build):
    assert after_build["eager"] == []
    assert len(after_build["named"]) >= 13  # at least one figure module per tab
    assert after_build["named_loaded"] == []


def test_only_the_tabs_common_modules_are_loaded(after_build):
    loaded = after_build["tab_modules"]
    assert all(m.endswith(".common") for m in loaded), loaded
    assert not set(loaded) & set(after_build["named"])
