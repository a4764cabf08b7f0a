"""Figure: batch-aware routing against batch size, from the shipped sweep: B held-out passages
teacher-forced in lockstep. Left, the distinct experts a step activates per layer; right, what
each routing costs at the output (mean NLL per byte against stock top-k's). Stock, cache-aware
max-rank (a shared cache of a quarter of the experts) and batch-aware max-rank (each token
prefers the experts the step already chose). Batch-aware routing is off by default: it makes a
request's text depend on its batch."""

from __future__ import annotations

from core.experiments.batching_routes import METHODS
from core.experiments.batching_sweep import ROUTE_BATCHES, load
from tabs.batching.common import batch_axis
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE

STYLE = {"stock": (ROLE["reference"], "o", "stock top-k"),
         "cache_aware": (ROLE["hit"], "s", "cache-aware max-rank"),
         "batch_aware": (ROLE["snapshot"], "D", "batch-aware max-rank")}


def batching_routing(max_batch: int) -> FigureResult:
    sw = load()
    metrics: dict[str, object] = {"max_batch": max_batch}
    with lab_figure(4.4) as fig:
        ux, qx = fig.subplots(1, 2)
        for m in METHODS:
            colour, marker, label = STYLE[m]
            rows = sw.route(m)
            bs = [r.batch for r in rows]
            ux.plot(bs, [r.union for r in rows], marker=marker, color=colour, label=label)
            qx.plot(bs, [r.delta_nll for r in rows], marker=marker, color=colour, label=label)
            for r in rows:
                metrics[f"{m}_union_B{r.batch}"] = r.union
                metrics[f"{m}_delta_nll_B{r.batch}"] = r.delta_nll
        ux.set_ylim(0, None)
        ux.set_ylabel("distinct experts per layer per step")
        ux.set_title("Experts a step activates", loc="left")
        qx.axhline(0, color=ROLE["annotation"], lw=0.8)
        qx.set_ylabel("NLL minus stock's (nats per byte)")
        qx.set_title("What it costs at the output", loc="left")
        for ax in (ux, qx):
            batch_axis(ax, ROUTE_BATCHES, max_batch)
        fig.suptitle("Batch-aware routing is off by default: a token's experts, and so its "
                     "text, then depend on what shares its step", x=0.01, ha="left",
                     fontsize=9, color=ROLE["annotation"])
        handles, texts = ux.get_legend_handles_labels()
        fig.legend(handles, texts, loc="outside lower center", ncols=3, fontsize=8)
    return FigureResult(fig, metrics)
