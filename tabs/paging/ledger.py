"""Figure: the memory ledger at K3 scale: one sequence's MLA latents grow with its length, its
KDA state does not; the crossover length; one KDA layer's page group."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import NullLocator

from core.paging.ledger import k3_geometry
from core.paging.walkthrough import pages_crossover_tokens
from tabs.axes import plain_log
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE
from tabs.units import GIB, KIB, MIB

LENGTHS = np.unique(np.round(np.logspace(3, 6, 241)).astype(int))  # 1k .. 1M tokens
MARKS = (1_000, 100_000, 1_000_000)
# A projector: the ledger's legend below the panels in short words, shorter titles and labels
LOOK = Projector(words={"  … in whole pages": "MLA in whole pages",
                        "fraction of the page used": "page used"}, legends="below")


@dataclass(frozen=True, kw_only=True)
class LedgerLayout:
    crossover_at: tuple[float, float]  # the crossover note's offset from the crossing (points)
    crossover_va: str  # the note's vertical anchor: its baseline above, or its top under the line
    all_pages_to: int  # every page of the group labelled up to this many pages, else its ends


# a projector: the crossover noted under the KDA line right of it (where no line runs); the
# page group's ends labelled alone
LEDGER = Arrangement(
    normal=LedgerLayout(crossover_at=(8, 28), crossover_va="baseline", all_pages_to=14),
    projector=LedgerLayout(crossover_at=(6, -12), crossover_va="top", all_pages_to=0))


def _bytes_panel(ax, geo, lay: LedgerLayout) -> None:
    mla = np.array([geo.mla_bytes(int(n)) for n in LENGTHS]) / GIB
    mla_paged = np.array([geo.mla_pages(int(n)) for n in LENGTHS]) * geo.page_bytes / GIB
    kda = geo.kda_bytes / GIB
    kda_paged = geo.kda_pages * geo.page_bytes / GIB
    ax.plot(LENGTHS, mla, color=ROLE["mla"],
            label=brief(ax, f"MLA latents: {geo.n_mla} layers × {geo.mla_token_bytes:,} B per "
                        "token", f"MLA latents ({geo.mla_token_bytes:,} B / token / layer)"))
    ax.plot(LENGTHS, mla_paged, color=ROLE["mla"], ls="--", lw=1.0, label="  … in whole pages")
    ax.axhline(kda, color=ROLE["kda"],
               label=brief(ax, f"KDA state: {geo.n_kda} layers × (S + conv tail), any length",
                           "KDA state, any length"))
    ax.axhline(kda_paged, color=ROLE["kda"], ls="--", lw=1.0,
               label=brief(ax, f"  … in pages: {geo.kda_pages} pages",
                           f"KDA in pages: {geo.kda_pages}"))
    x = geo.crossover_tokens
    ax.axvline(x, color=ROLE["annotation"], ls=":", lw=1.2)
    paged = pages_crossover_tokens(geo)
    ax.annotate(brief(ax, f"crossover {x:,} tokens\n({paged:,} in whole pages):\n"
                      "longer, the latents\noutweigh the KDA state",
                      f"crossover {x:,} tokens\n({paged:,} in whole pages)"),
                (x, kda), xytext=lay.crossover_at, textcoords="offset points",
                fontsize=8, fontweight="bold", va=lay.crossover_va,
                arrowprops={"arrowstyle": "-", "color": ROLE["annotation"]})
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
    ax.set_title(brief(ax, f"K3 ledger, one sequence, P = {geo.tokens_per_page} tokens per page",
                       f"K3 ledger, one sequence, P = {geo.tokens_per_page}"))
    ax.legend(loc="upper left", fontsize=7.5)


def _group_panel(ax, geo, lay: LedgerLayout) -> None:
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
        few = n <= lay.all_pages_to  # every page labelled
        if few or is_conv or i in (0, heads.pages - 1):
            ax.text(i + 0.5, 1.04, ("conv" if few else "c") if is_conv else f"{held}",
                    ha="center", va="bottom", fontsize=7)
    ax.set_xlim(0, n)
    ax.set_ylim(0, 1.22)
    ax.set_yticks([0, 0.5, 1], ["0", "½", "1"])
    ax.set_xticks([])
    ax.grid(False)
    ax.set_ylabel("fraction of the page used")
    ax.set_title(f"One KDA layer: {n} pages")
    ax.set_xlabel(brief(ax, f"pages of {geo.page_bytes / KIB:,.0f} KiB; numbers: whole heads "
                        f"held\nS: {heads.H} heads × {heads.head_bytes / KIB:,.0f} KiB = "
                        f"{geo.kda_state_bytes / MIB:,.0f} MiB = "
                        f"{geo.kda_state_bytes / geo.page_bytes:.1f} pages → {heads.pages}\n"
                        f"conv tail: {geo.kda_conv_bytes / KIB:,.0f} KiB → {conv_pages} page",
                        f"numbers: heads held; S: "
                        f"{geo.kda_state_bytes / geo.page_bytes:.1f} pages → {heads.pages}; "
                        f"c: conv tail"), fontsize=8)


@arranged_by(LEDGER)
def paging_ledger(k3_tokens_per_page: int, *, lay: LedgerLayout) -> FigureResult:
    geo = k3_geometry(tokens_per_page=k3_tokens_per_page)
    with lab_figure(4.4, look=LOOK) as fig:
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.0, 1]})
        _bytes_panel(left, geo, lay)
        _group_panel(right, geo, lay)
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
