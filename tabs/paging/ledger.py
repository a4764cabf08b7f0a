"""Figure: the memory ledger at K3 scale: one sequence's MLA latents grow with its length, its
KDA state does not; the crossover length; one KDA layer's page group."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import NullLocator

from core.paging.ledger import k3_geometry
from core.paging.walkthrough import pages_crossover_tokens
from tabs.axes import plain_log
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE
from tabs.units import GIB, KIB, MIB

LENGTHS = np.unique(np.round(np.logspace(3, 6, 241)).astype(int))  # 1k .. 1M tokens
MARKS = (1_000, 100_000, 1_000_000)


def _bytes_panel(ax, geo) -> None:
    mla = np.array([geo.mla_bytes(int(n)) for n in LENGTHS]) / GIB
    mla_paged = np.array([geo.mla_pages(int(n)) for n in LENGTHS]) * geo.page_bytes / GIB
    kda = geo.kda_bytes / GIB
    kda_paged = geo.kda_pages * geo.page_bytes / GIB
    ax.plot(LENGTHS, mla, color=ROLE["mla"],
            label=f"MLA latents: {geo.n_mla} layers × {geo.mla_token_bytes:,} B per token")
    ax.plot(LENGTHS, mla_paged, color=ROLE["mla"], ls="--", lw=1.0, label="  … in whole pages")
    ax.axhline(kda, color=ROLE["kda"],
               label=f"KDA state: {geo.n_kda} layers × (S + conv tail), any length")
    ax.axhline(kda_paged, color=ROLE["kda"], ls="--", lw=1.0,
               label=f"  … in pages: {geo.kda_pages} pages")
    x = geo.crossover_tokens
    ax.axvline(x, color=ROLE["annotation"], ls=":", lw=1.2)
    ax.annotate(f"crossover {x:,} tokens\n({pages_crossover_tokens(geo):,} in whole pages):\n"
                "longer, the latents\noutweigh the KDA state",
                (x, kda), xytext=(8, 28), textcoords="offset points", fontsize=8,
                fontweight="bold", arrowprops={"arrowstyle": "-", "color": ROLE["annotation"]})
    ax.set_xscale("log")
    ax.set_yscale("log")
    lo, hi = 0.01, 100.0
    ax.set_xlim(LENGTHS[0], LENGTHS[-1])
    ax.set_ylim(lo, hi)
    ax.set_xticks([1e3, 1e4, 1e5, 1e6], ["1k", "10k", "100k", "1M"])
    ax.xaxis.set_minor_locator(NullLocator())
    plain_log(ax.yaxis, lo, hi)
    ax.set_xlabel("sequence length (tokens, log)")
    ax.set_ylabel("GiB per sequence (log)")
    ax.set_title(f"K3 ledger, one sequence, P = {geo.tokens_per_page} tokens per page")
    ax.legend(loc="upper left", fontsize=7.5)


def _group_panel(ax, geo) -> None:
    heads, conv_pages = geo.heads, geo.kda_pages_per_layer - geo.heads.pages
    n = geo.kda_pages_per_layer
    for i in range(n):
        is_conv = i >= heads.pages
        held = 0 if is_conv else min(heads.per_page, heads.H - i * heads.per_page)
        fill = (geo.kda_conv_bytes / conv_pages if is_conv else held * heads.head_bytes)
        ax.add_patch(Rectangle((i + 0.06, 0), 0.88, 1, facecolor=ROLE["empty"],
                               edgecolor=ROLE["kda"], lw=0.9))
        ax.add_patch(Rectangle((i + 0.06, 0), 0.88, fill / geo.page_bytes,
                               facecolor=ROLE["kda"], alpha=0.55 if is_conv else 1.0, lw=0))
        if n <= 14 or is_conv or i in (0, heads.pages - 1):
            ax.text(i + 0.5, 1.04, ("conv" if n <= 14 else "c") if is_conv else f"{held}",
                    ha="center", va="bottom", fontsize=7)
    ax.set_xlim(0, n)
    ax.set_ylim(0, 1.22)
    ax.set_yticks([0, 0.5, 1], ["0", "½", "1"])
    ax.set_xticks([])
    ax.grid(False)
    ax.set_ylabel("fraction of the page used")
    ax.set_title(f"One KDA layer: {n} pages")
    ax.set_xlabel(f"pages of {geo.page_bytes / KIB:,.0f} KiB; numbers: whole heads held\n"
                  f"S: {heads.H} heads × {heads.head_bytes / KIB:,.0f} KiB = "
                  f"{geo.kda_state_bytes / MIB:,.0f} MiB = "
                  f"{geo.kda_state_bytes / geo.page_bytes:.1f} pages → {heads.pages}\n"
                  f"conv tail: {geo.kda_conv_bytes / KIB:,.0f} KiB → {conv_pages} page",
                  fontsize=8)


def paging_ledger(k3_tokens_per_page: int) -> FigureResult:
    geo = k3_geometry(tokens_per_page=k3_tokens_per_page)
    with lab_figure(4.4) as fig:
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.0, 1]})
        _bytes_panel(left, geo)
        _group_panel(right, geo)
    metrics: dict[str, int | float] = {
        "tokens_per_page": geo.tokens_per_page,
        "page_bytes": geo.page_bytes,
        "mla_bytes_per_token_per_layer": geo.mla_token_bytes,
        "kda_state_bytes_per_layer": geo.kda_state_bytes,
        "kda_conv_bytes_per_layer": geo.kda_conv_bytes,
        "kda_heads_per_page": geo.heads.per_page,
        "kda_pages_per_layer": geo.kda_pages_per_layer,
        "kda_pages": geo.kda_pages,
        "kda_gib": geo.kda_bytes / GIB,
        "crossover_tokens": geo.crossover_tokens,
        "pages_crossover_tokens": pages_crossover_tokens(geo),
    }
    for n in MARKS:
        metrics[f"mla_gib_at_{n}"] = geo.mla_bytes(n) / GIB
        metrics[f"pages_at_{n}"] = geo.pages(n)
    return FigureResult(fig, metrics)
