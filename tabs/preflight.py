"""`python app.py --check`: an install verified before class, in well under a minute.

Each check returns a Check (its name, whether it passed, what was found, and, when it failed,
how to fix it); run_checks() runs them in order and keeps going after a failure, so one run
lists everything that is wrong:
  python     the interpreter is 3.10 to 3.13 (the lab is tested on 3.11)
  packages   every pinned runtime package imports, at the pinned version (requirements.txt)
  model      every shipped weight file exists with the size and sha256 of its manifest
  figure     one figure whose pixels use no torch kernel (the fleet ring's layout: hashing and
             numpy) renders and matches its baseline within the figure tests' RMS tolerance
  port       the port the lab will serve on is free on the host it binds
"""

from __future__ import annotations

import importlib
import importlib.metadata
import socket
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REQUIREMENTS = REPO / "requirements.txt"
BASELINES = REPO / "tests" / "figures" / "baseline"
CHECK_FIGURE = "fleet_ring_layout"  # hashing and numpy only: the same pixels on any CPU
RMS_TOLERANCE = 2.0  # as tests/figures/test_baselines.py
PYTHONS = ((3, 10), (3, 13))
INSTALL = "pip install -r requirements.txt"


@dataclass(frozen=True, kw_only=True)
class Check:
    name: str
    ok: bool
    found: str
    fix: str = ""


def pinned(path: Path = REQUIREMENTS) -> dict[str, str]:
    """requirements.txt's exact pins: distribution name -> version."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        spec = line.split("#", 1)[0].strip()
        if "==" in spec:
            name, version = (s.strip() for s in spec.split("==", 1))
            pins[name] = version
    return pins


def check_python(version: tuple[int, int] = sys.version_info[:2]) -> Check:
    lo, hi = PYTHONS
    ok = lo <= version <= hi
    return Check(name="python", ok=ok, found=f"Python {version[0]}.{version[1]}",
                 fix="" if ok else f"use Python {lo[0]}.{lo[1]} to {hi[0]}.{hi[1]} "
                 "(3.11 is the tested one)")


_MODULE = {"gradio_client": "gradio_client", "markdown-it-py": "markdown_it"}


def check_packages(pins: dict[str, str] | None = None) -> Check:
    pins = pinned() if pins is None else pins
    wrong = []
    for name, want in pins.items():
        try:
            importlib.import_module(_MODULE.get(name, name.replace("-", "_")))
            have = importlib.metadata.version(name)
        except Exception as e:  # noqa: BLE001 - any import failure is the finding
            wrong.append(f"{name} does not import ({type(e).__name__}: {e})")
            continue
        if have.split("+")[0] != want:
            wrong.append(f"{name} {have}, pinned {want}")
    ok = not wrong
    torch_hint = ("; if pip finds no torch 2.13.0 wheel for this Python or platform, install "
                  "Python 3.11 and retry" if any(w.startswith("torch") for w in wrong) else "")
    return Check(name="packages", ok=ok,
                 found=f"{len(pins)} pinned packages import at their versions" if ok
                 else "; ".join(wrong),
                 fix="" if ok else f"run `{INSTALL}`{torch_hint}")


def check_model() -> Check:
    import core.model.manifest as manifest
    from core.model.weights import verify

    try:
        files = verify(manifest.ASSET_DIR)["files"]  # size and sha256 of every file
    except manifest.ModelWeightsError as e:
        return Check(name="model", ok=False, found=str(e).split(". Rebuild")[0],
                     fix="restore assets/model/ from the repository (`git checkout -- "
                     "assets/model`), or rebuild it with `python -m core.model.train`")
    return Check(name="model", ok=True,
                 found=f"{len(files)} weight files match their sha256 manifest")


def check_figure(name: str = CHECK_FIGURE) -> Check:
    from matplotlib.testing.compare import compare_images

    from tabs.figure import render_png
    from tabs.registry import all_figures
    from tabs.spec import render

    baseline = BASELINES / f"{name}.png"
    if not baseline.is_file():
        return Check(name="figure", ok=False, found=f"no baseline {baseline}",
                     fix="run from a full clone of the repository (tests/ holds the baselines)")
    tab, fig = next((t, f) for t, f in all_figures() if f.name == name)
    with tempfile.TemporaryDirectory() as tmp:
        actual = Path(tmp) / f"{name}.png"
        actual.write_bytes(render_png(render(fig, tab).figure))
        diff = compare_images(str(baseline), str(actual), tol=RMS_TOLERANCE)
    ok = diff is None
    return Check(name="figure", ok=ok,
                 found=f"{name} matches its baseline (RMS <= {RMS_TOLERANCE})" if ok
                 else f"{name} differs from its baseline: {diff}",
                 fix="" if ok else f"the figure packages differ from the pins: run `{INSTALL}` "
                 "in a fresh virtual environment")


def check_port(host: str, port: int) -> Check:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        try:
            s.bind((host, port))
        except OSError as e:
            return Check(name="port", ok=False, found=f"{host}:{port} is taken ({e.strerror})",
                         fix=f"stop what serves on {port}, or run `python app.py --port "
                         f"{port + 1}`")
    return Check(name="port", ok=True, found=f"{host}:{port} is free")


def run_checks(host: str, port: int, say: Callable[[Check], None] = lambda c: None) -> list[Check]:
    """Every check in order; a check that crashes is reported as failed, and the rest run."""
    steps: list[tuple[str, Callable[[], Check]]] = [
        ("python", check_python), ("packages", check_packages), ("model", check_model),
        ("figure", check_figure), ("port", lambda: check_port(host, port))]
    out = []
    for name, step in steps:
        try:
            result = step()
        except Exception as e:  # noqa: BLE001 - a broken install fails in any way
            result = Check(name=name, ok=False, found=f"{type(e).__name__}: {e}",
                           fix=f"run `{INSTALL}`; if it persists, report this message")
        say(result)
        out.append(result)
    return out


def show(check: Check) -> None:
    print(f"{'ok  ' if check.ok else 'FAIL'} {check.name:9s} {check.found}", flush=True)
    if not check.ok:
        print(f"     {'':9s} fix: {check.fix}", flush=True)
