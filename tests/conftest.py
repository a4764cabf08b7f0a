"""Shared fixtures: the app launched on 127.0.0.1 and Debian chromium for playwright. The suite
runs on two pytest-xdist workers (pyproject addopts); every e2e test goes to one of them, in
order, with one chromium and one server, and the chromium release timings that tier measured
(tests/e2e/timing.py) are printed at the end and written to test-results/e2e-timings.txt."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    import gradio as gr

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# Before anything imports gradio (test modules import app at collection time).
os.environ.setdefault("GRADIO_TEMP_DIR", tempfile.mkdtemp(prefix="serving-lab-gradio-"))


def _one_torch_thread() -> None:
    """Tests call core.experiments directly, not through the figures' lazy names (tabs/lazy.py,
    which set torch's threads before the first engine import): run them as the lab does."""
    import torch

    from tabs.lazy import FIGURE_TORCH_THREADS

    torch.set_num_threads(FIGURE_TORCH_THREADS)


_one_torch_thread()

# Hypothesis draws the same examples on every run (a CI run cannot go red on the day a random
# draw finds an old bug, nor green again on the next); `HYPOTHESIS_PROFILE=explore pytest`
# draws fresh ones each run, to look for new bugs (then pin what it finds with @example).
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "test-results"
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_demo() -> Iterator[gr.Blocks]:
    """The same Blocks users get, launched on 127.0.0.1 for the session."""
    from app import build_app, launch_kwargs

    demo = build_app()
    demo.launch(
        server_name="127.0.0.1",
        server_port=_free_port(),
        prevent_thread_lock=True,
        quiet=True,
        **launch_kwargs(),
    )
    try:
        yield demo
    finally:
        demo.close()


@pytest.fixture(scope="session")
def app_url(app_demo) -> str:
    return app_demo.local_url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium not found at {CHROMIUM} (apt-get install -y chromium)")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--disable-sync",
            "--font-render-hinting=none",
            "--force-device-scale-factor=1",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {
        **browser_context_args,
        "viewport": {"width": 1280, "height": 800},
        "device_scale_factor": 1,
        "reduced_motion": "reduce",
        "color_scheme": "light",
    }


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):  # the main process, once per run
        from tests.e2e.timing import RELEASES

        RELEASES.unlink(missing_ok=True)


# Files whose tests share module fixtures that are costly to build (every figure rendered,
# cold and warm; every lesson claim computed): on one worker they are built once.
TOGETHER = ("tests/figures/test_contract.py", "tests/lessons/test_claims.py")


def pytest_xdist_make_scheduler(config, log):
    """Every browser test on one worker (one app server, one chromium, their releases timed
    while the other worker runs the rest); every other test goes wherever a worker is free.
    xdist's own `--dist loadgroup` with xdist_group marks would say this, but under pytest 9 it
    groups nothing: it renames each item's node id through `_nodeid`, which pytest 9 no longer
    reads. So the grouping is by path, through xdist's documented scheduler hook."""
    from xdist.scheduler import LoadScopeScheduling

    class BrowserTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith("tests/e2e/"):
                return "tests/e2e"
            path = nodeid.split("::")[0]
            return path if path in TOGETHER else nodeid

    return BrowserTestsTogether(config, log)


def pytest_terminal_summary(terminalreporter) -> None:
    from tests.e2e.timing import releases, report

    lines = report(releases())
    if not lines:
        return
    terminalreporter.section("chromium: hero release -> figures (measured, not asserted)")
    for line in lines:
        terminalreporter.write_line(line)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "e2e-timings.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
