"""Startup benchmark: `python -m tabs.startup_bench` starts the lab and a bare Gradio app with
one matplotlib plot (the peer), side by side in one run, and prints for each: seconds from
process start to the first page (GET / answers 200), and for the lab also to the first tab's
figures drawn (every figure endpoint of the opening tab answered through gradio_client, as
the page's load event asks for them), with peak RSS. Ratios are lab / peer, measured in turn
`--rounds` times (the machines are shared and noisy); the median is reported.

The lab's bytecode is compiled first, as every start after the first finds it (the peer's
libraries are compiled already). Without that, a machine with PYTHONDONTWRITEBYTECODE set and a
source edited since its last compile recompiles those modules on every start: 1.67x instead
of 1.43x in one measurement.
"""

from __future__ import annotations

import argparse
import compileall
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PEER = """
import os, sys
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
import gradio as gr
import numpy as np
from matplotlib.figure import Figure

def plot(n=50):
    fig = Figure(figsize=(10, 3.6), dpi=100, layout="constrained")
    ax, bx = fig.subplots(1, 2)
    x = np.linspace(0, 1, int(n))
    ax.plot(x, x ** 2); bx.plot(x, np.sqrt(x))
    return fig

with gr.Blocks() as demo:
    s = gr.Slider(10, 100, 50)
    p = gr.Plot(value=plot(), format="png")
    s.release(plot, s, p, api_name="plot")
demo.launch(server_name="127.0.0.1", server_port=int(sys.argv[1]), quiet=True)
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _wait_page(url: str, proc: subprocess.Popen, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before serving {url}")
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


def measure(cmd: list[str], port: int, figures: list[str], timeout: float) -> dict[str, float]:
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_page(url, proc, timeout)
        out = {"page_s": time.monotonic() - t0}
        if figures:
            from tabs.bench_client import bench_client

            client = bench_client(url)
            for name in figures:
                client.predict(api_name=f"/{name}")
            out["figures_s"] = time.monotonic() - t0
        out["rss_mib"] = _peak_rss_mib(proc.pid)
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="lab/peer pairs (default 3)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per start")
    a = ap.parse_args(argv)
    if not 1 <= a.rounds <= 20:
        ap.error(f"--rounds must be in [1, 20], got {a.rounds}")
    from tabs.registry import REGISTRY

    opening = [f.name for f in REGISTRY[0].figures]
    compiled = [compileall.compile_dir(REPO / d, quiet=2) for d in ("core", "tabs")]
    if not all([*compiled, compileall.compile_file(REPO / "app.py", quiet=2)]):
        print("warning: some of the lab's modules did not compile; starts will pay for them")
    with tempfile.TemporaryDirectory() as tmp:
        peer_py = Path(tmp) / "peer.py"
        peer_py.write_text(PEER)
        rows: list[tuple[dict[str, float], dict[str, float]]] = []
        for _ in range(a.rounds):
            p1, p2 = _port(), _port()
            peer = measure([sys.executable, str(peer_py), str(p1)], p1, ["plot"], a.timeout)
            lab = measure([sys.executable, "app.py", "--port", str(p2)], p2, opening, a.timeout)
            rows.append((peer, lab))
            print(f"peer page {peer['page_s']:.2f} s, plot {peer['figures_s']:.2f} s, "
                  f"{peer['rss_mib']:.0f} MiB | lab page {lab['page_s']:.2f} s, first tab "
                  f"({len(opening)} figures) {lab['figures_s']:.2f} s, {lab['rss_mib']:.0f} MiB",
                  flush=True)

    def med(side: int, key: str) -> float:
        return statistics.median(r[side][key] for r in rows)

    print(f"\nmedian of {a.rounds}: first page lab {med(1, 'page_s'):.2f} s vs peer "
          f"{med(0, 'page_s'):.2f} s = {med(1, 'page_s') / med(0, 'page_s'):.2f}x "
          "(target <= 1.3x); "
          f"first tab drawn {med(1, 'figures_s'):.2f} s vs the peer's plot "
          f"{med(0, 'figures_s'):.2f} s = {med(1, 'figures_s') / med(0, 'figures_s'):.2f}x; "
          f"peak RSS lab {med(1, 'rss_mib'):.0f} MiB vs peer {med(0, 'rss_mib'):.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
