"""Serving Lab: an interactive Gradio lab of how a hybrid KDA/MLA MoE model is served.

python app.py                      # the lab at http://127.0.0.1:7860
python app.py --export DIR         # every tab's default figures to PNG + metrics JSON, no server
python app.py --export DIR --only model,paging_pack   # just these tabs or figures
python app.py --export DIR --sheet  # also SVGs and DIR/index.html, a contact sheet for review
python app.py --check              # verify this install before class: prints what is wrong
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# Two events at a time unless an event says otherwise (figures and Serve runs set their own).
# Set here rather than by demo.queue(default_concurrency_limit=2): queue() rebuilds the whole
# FastAPI app a second time (~0.25 s of startup with the lab's ~400 events).
os.environ.setdefault("GRADIO_DEFAULT_CONCURRENCY_LIMIT", "2")

import gradio as gr  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from tabs.body_limit import MAX_BODY_BYTES, BodyLimit  # noqa: E402
from tabs.figure import render_png  # noqa: E402
from tabs.lazy import set_torch_threads  # noqa: E402
from tabs.metrics import to_json  # noqa: E402
from tabs.registry import REGISTRY, all_figures  # noqa: E402
from tabs.session_state import install as lean_sessions  # noqa: E402
from tabs.shell import wire_page_load  # noqa: E402
from tabs.spec import render  # noqa: E402
from tabs.ui import build_tab  # noqa: E402
from tabs.ui_run import CLASS_CONCURRENCY, RUN_CONCURRENCY  # noqa: E402
from tabs.warm import warm_in_background  # noqa: E402

ASSETS = Path(__file__).resolve().parent / "assets"
CLASS_GUIDE = ASSETS / "class_guide.md"  # also linked from the README
# The page's text face: "Lab Sans" is Gradio's bundled Source Sans Pro with a complete bold
# (assets/page.css says why); then the system's.
FONT = ("Lab Sans", "ui-sans-serif", "system-ui", "sans-serif")
TITLE = "Serving Lab: serving a hybrid KDA + MLA mixture of experts, live"


SERVER_TORCH_THREADS = 1


def build_app(class_engine: bool = False) -> gr.Blocks:
    """The Blocks users get; tests build exactly this.

    torch runs one thread per call in the server: Gradio already runs up to two figures (and
    a Serve run) at once on the lab's 2 cores, and two-thread torch calls side by side wait on
    each other's core (4x slower per call measured here); one thread each keeps both cores busy
    without oversubscription. Building the app imports no torch (the tabs name their figures
    lazily, tabs/lazy.py), so the count is handed to the resolver, which sets it before the
    first figure imports an engine module: torch loads after the first page.
    """
    set_torch_threads(SERVER_TORCH_THREADS)
    lean_sessions()  # a new session copies no block configs (tabs/session_state.py)
    room = {}
    if class_engine:  # the controls the room sets (the engine is loaded by now)
        from core.experiments.serve import room_settings

        room = room_settings()
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        with gr.Row(equal_height=True, elem_classes=["lab-header"]):
            gr.Markdown(f"# {TITLE}\nEvery figure is computed by the lab's engine as you "
                        "move a control.", elem_classes=["lab-title"])
            with gr.Column(scale=0, min_width=340):
                # This browser only; a link with ?present=1 opens in it (README).
                toggle = gr.Checkbox(False, label="Presentation mode (projector-sized text)",
                                     elem_id="present-toggle", container=False)
        presenting = gr.State(False)  # the toggle's value, for the Serve run (not an API input)
        note = gr.Markdown(visible=False, elem_id="share-note")
        built = []
        with gr.Tabs(overflow_behavior="wrap") as tabs:  # every name shown: rows, no menu
            for i, tab in enumerate(REGISTRY):
                with gr.Tab(tab.title, id=tab.id, elem_id=f"tab-{tab.id}"):
                    built.append(build_tab(
                        tab, toggle, presenting, run_concurrency=(
                            CLASS_CONCURRENCY if class_engine else RUN_CONCURRENCY),
                        next_tab=REGISTRY[i + 1] if i + 1 < len(REGISTRY) else None,
                        route=REGISTRY, fixed=room if tab.run is not None else None))
        for b in built:  # a button that opens another tab selects it (its select draws it)
            for button, target in b.opens.items():
                button.click(lambda t=target: gr.Tabs(selected=t), None, [tabs], queue=False,
                             show_progress="hidden", api_visibility="private")
        with gr.Accordion("Class guide for the lecturer: install, a 50-minute route, the "
                          "limits of one laptop", open=False, elem_id="class-guide"):
            gr.Markdown(CLASS_GUIDE.read_text(encoding="utf-8"))
        wire_page_load(demo, tabs, note, built, toggle, presenting)
    return demo


def launch_kwargs(max_threads: int = 40) -> dict:
    # show_error: a malformed API call (e.g. missing fields) gets Gradio's own message, not null.
    # head_paths: the page's script (assets/lab_head.html: the pinned light theme, slider keys,
    # alt text, what the page load calls); head: presentation mode's page rules
    # (assets/page.css), unscoped.
    # app_kwargs: every request body is bounded (tabs/body_limit.py); the lab takes no uploads.
    # max_threads: with --class every streaming Generate holds a worker thread while it waits
    # on the shared batch, beside the figures' draws.
    return {"theme": gr.themes.Default(font=list(FONT)), "max_threads": max_threads,
            "css_paths": [ASSETS / "lab.css"], "footer_links": [],
            "show_error": True, "head_paths": [ASSETS / "lab_head.html"],
            "head": f"<style>{(ASSETS / 'page.css').read_text(encoding='utf-8')}</style>",
            "app_kwargs": {"middleware": [Middleware(BodyLimit, max_bytes=MAX_BODY_BYTES)]}}


def export(out_dir: Path, only: str | None = None, sheet: bool = False) -> list[Path]:
    """Render the default figures to DIR/<name>.png and DIR/<name>.json: every tab's, or those
    of the comma-separated tab ids and figure names in `only`; with sheet, also <name>.svg and
    DIR/index.html, the contact sheet (tabs/sheet.py)."""
    chosen = all_figures()
    if only is not None:
        wanted = {w.strip() for w in only.split(",") if w.strip()}
        known = {t.id for t, _ in chosen} | {f.name for _, f in chosen}
        if not wanted or wanted - known:
            raise SystemExit(f"--only: unknown tab or figure {sorted(wanted - known) or only!r}; "
                             f"known: {', '.join(sorted(known))}")
        chosen = [(t, f) for t, f in chosen if t.id in wanted or f.name in wanted]
    from tabs.sheet import render_svg, write_sheet  # only the export needs matplotlib's compare

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for tab, fig in chosen:
        result = render(fig, tab)
        png, js = out_dir / f"{fig.name}.png", out_dir / f"{fig.name}.json"
        png.write_bytes(render_png(result.figure))
        js.write_text(to_json(result.metrics), encoding="utf-8")
        written += [png, js]
        if sheet:
            svg = out_dir / f"{fig.name}.svg"
            svg.write_bytes(render_svg(result.figure))
            written.append(svg)
        print(f"wrote {png} and {js.name}  [{tab.title}: {fig.title}]")
    if sheet:
        by_tab = [(t, [f for u, f in chosen if u is t]) for t in REGISTRY
                  if any(u is t for u, _ in chosen)]
        written.append(write_sheet(out_dir, by_tab))
        print(f"wrote {written[-1]}")
    return written


def preflight(host: str, port: int) -> int:
    """--check: every check of tabs/preflight.py, printed as it finishes; 0 when all pass."""
    import time

    from tabs.preflight import run_checks, show

    t0 = time.perf_counter()
    results = run_checks(host, port, say=show)
    bad = [c.name for c in results if not c.ok]
    print(f"{len(results) - len(bad)} of {len(results)} checks passed in "
          f"{time.perf_counter() - t0:.0f} s" + (f"; fix: {', '.join(bad)}" if bad else
                                                  ": ready for class"), flush=True)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    ap.add_argument("--export", metavar="DIR", type=Path, help="render figures to DIR and exit")
    ap.add_argument("--sheet", action="store_true", help="with --export: also SVGs and an "
                    "index.html contact sheet (lessons, figures, baseline differences)")
    ap.add_argument("--only", metavar="IDS", help="with --export: comma-separated tab ids or "
                    "figure names (default: every figure)")
    ap.add_argument("--check", action="store_true", help="verify this install before class "
                    "(imports, the model's sha256 manifest, one figure against its baseline, "
                    "the port free), print what is wrong and how to fix it, and exit")
    ap.add_argument("--class", dest="class_engine", action="store_true",
                    help="serve the whole class from one engine: every page's Generate joins "
                    "one batch (each page sees only its own text, and the room's counts)")
    ap.add_argument("--class-shared-prefix", action="store_true",
                    help="with --class: share prefix reuse across students (it tells a student "
                    "that someone typed the same prefix; off by default)")
    ap.add_argument("--render-cache-mib", metavar="MIB", type=int, default=256,
                    help="figures rendered for anyone, kept for everyone (default 256 MiB; "
                    "0 keeps none)")
    args = ap.parse_args(argv)
    if not 1 <= args.port <= 65535:
        ap.error(f"--port must be in [1, 65535], got {args.port}")
    if args.class_shared_prefix and not args.class_engine:
        ap.error("--class-shared-prefix needs --class")
    if not 0 <= args.render_cache_mib <= 65536:
        ap.error(f"--render-cache-mib must be in [0, 65536], got {args.render_cache_mib}")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"WARNING: --host {args.host} serves the lab to other machines on the network; "
              "it has no login. Use 127.0.0.1 (the default) unless you mean it.",
              file=sys.stderr, flush=True)
    if args.check:
        return preflight(args.host, args.port)
    if args.export is not None:
        written = export(args.export, args.only, args.sheet)
        print(f"{sum(p.suffix == '.png' for p in written)} figures exported to {args.export}")
        return 0
    n_figures = len(all_figures())
    print(f"Serving Lab: {len(REGISTRY)} tabs, {n_figures} figures (each tab draws when opened)",
          flush=True)
    from tabs.render_cache import configure

    configure(args.render_cache_mib << 20)
    if args.class_engine:  # first: it limits the heap's arenas before any thread starts
        from core.experiments.serve import serve_class

        serve_class(shared_prefix=args.class_shared_prefix)
        print("Class mode: one engine serves every page's Generate (prefixes "
              f"{'shared' if args.class_shared_prefix else 'per student'})", flush=True)
    # the seconds-long sweeps some tabs read, computed after startup; for a class, then every
    # tab's figures at its defaults and presets (the lecture's path) into the shared cache
    warm_in_background(prerender=args.class_engine)
    build_app(class_engine=args.class_engine).launch(
        server_name=args.host, server_port=args.port,
        **launch_kwargs(max_threads=CLASS_CONCURRENCY + 40 if args.class_engine else 40))
    return 0


if __name__ == "__main__":
    sys.exit(main())
