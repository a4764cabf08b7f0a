"""Figure: a real KDA state (the model's, after prefilling the chosen length) packed into pages
in whole heads and unpacked again, with the live max |diff|."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from core.experiments.paging import TEXT, roundtrip
from tabs.figure import FigureResult, brief, lab_figure, shorten
from tabs.palette import ROLE
from tabs.units import KIB

MAX_PAGE_ROWS = 4  # the most pages a toy layer's S takes (float32, 32 tokens per page)
HEAD_SHADES = ("#009E73", "#5FC4A6")  # the KDA role colour, alternating dark / light per head


def _heads(axes, state: np.ndarray) -> None:
    lim = float(np.quantile(np.abs(state), 0.99)) or 1.0  # a few large entries would wash out
    for h, ax in enumerate(axes):
        ax.imshow(state[h], cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_title(brief(ax, f"S, head {h} [{state.shape[1]}×{state.shape[2]}]",
                           f"S, head {h}"), fontsize=8.5)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        for side in ("top", "right"):
            ax.spines[side].set_visible(True)


def _pages(ax, rt) -> None:
    """A projector shows every label in one line (offsets are on the axis), the title shorter."""
    lay = rt.layout
    for i, page in enumerate(rt.page_ids):
        ax.add_patch(Rectangle((0, i - 0.38), lay.page_bytes, 0.76, facecolor=ROLE["empty"],
                               edgecolor=ROLE["annotation"], lw=0.9, hatch="////"))
        shorten(ax.text(-0.012 * lay.page_bytes, i, f"page {i}\n(pool p{page})", ha="right",
                        va="center", fontsize=7.5), f"p{page}")
    for h, (page, off) in enumerate(rt.slots):
        ax.add_patch(Rectangle((off, page - 0.38), lay.head_bytes, 0.76,
                               facecolor=HEAD_SHADES[h % 2], edgecolor="white", lw=1.2))
        shorten(ax.text(off + lay.head_bytes / 2, page, f"head {h}\n@ {off:,} B", ha="center",
                        va="center", fontsize=7 if lay.per_page <= 8 else 6, color="white"),
                str(h) if lay.per_page > 4 else f"head {h}")
    used = lay.per_page * lay.head_bytes
    if used < lay.page_bytes and lay.pages > 1:
        shorten(ax.text((used + lay.page_bytes) / 2, 0,
                        f"head {lay.per_page}\nwould straddle:\nit starts page 1", ha="center",
                        va="center", fontsize=6.5,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.5}),
                "next page")
    ax.set_xlim(0, lay.page_bytes)
    ax.set_ylim(max(MAX_PAGE_ROWS, len(rt.page_ids)) - 0.5, -0.5)  # same bar height always
    ax.set_yticks([])
    slots = [h * lay.head_bytes for h in range(lay.per_page + 1)]
    ticks = slots[:: 1 if len(slots) <= 10 else 2] + [lay.page_bytes]
    ax.set_xticks(sorted(set(ticks)), [f"{v / KIB:g}" for v in sorted(set(ticks))])
    ax.grid(False)
    heads = "head" if lay.per_page == 1 else "heads"
    pages = "page" if lay.pages == 1 else "pages"
    ax.set_xlabel(brief(ax, "byte offset within the page (KiB; ticks at head slots); hatched: "
                        "bytes no head uses", "byte offset in the page (KiB); hatched: unused"))
    ax.set_title(brief(ax, f"Layer 0's S in pages of {lay.page_bytes / KIB:g} KiB: {lay.per_page} "
                       f"whole {heads} of {lay.head_bytes / KIB:g} KiB per page, {lay.pages} "
                       f"{pages}; a head never spans two pages",
                       f"Layer 0's S in {lay.pages} {pages} of {lay.page_bytes / KIB:g} KiB, "
                       f"{lay.per_page} whole {heads} each"))


def _verdict(ax, rt, seq_len: int) -> None:
    lay = rt.layout
    yes = {True: "yes", False: "NO"}
    ax.axis("off")
    ax.set_title("Round trip, live")
    brief_lines = [  # a projector: the verdicts, without the arithmetic
        f"{lay.per_page} heads of {lay.head_bytes:,} B a page",
        f"{lay.pages} pages a layer",
        f"unused bytes: {lay.wasted_bytes:,}",
        f"split heads: {'none' if rt.no_split_head else 'SOME'}",
        f"{rt.layers} layers unpacked:",
        f"max|diff| = {rt.max_abs_diff:.3g}",
        f"bit for bit: {yes[rt.bit_exact]}",
    ]
    lines = [
        f"state after {seq_len} bytes of text",
        f"dtype {rt.dtype}",
        "",
        f"heads per page  ⌊{lay.page_bytes:,} / {lay.head_bytes:,}⌋ = {lay.per_page}",
        f"pages per layer ⌈{lay.H} / {lay.per_page}⌉ = {lay.pages}",
        f"unused bytes    {lay.wasted_bytes:,}",
        f"split heads     {'none' if rt.no_split_head else 'SOME'}",
        "",
        f"unpack(pack(S)) vs S, all {rt.layers} KDA layers:",
        f"  max|diff| = {rt.max_abs_diff:.3g}",
        f"  bit for bit: {yes[rt.bit_exact]}",
    ]
    shorten(ax.text(0.0, 1.0, "\n".join(lines), transform=ax.transAxes, va="top", ha="left",
                    fontsize=8, family="DejaVu Sans Mono", linespacing=1.35),
            "\n".join(brief_lines))


def paging_pack(seq_len: int, tokens_per_page: int, dtype: str) -> FigureResult:
    rt = roundtrip(seq_len, tokens_per_page, dtype)
    state = rt.state.float().numpy()  # [H, K, V]
    with lab_figure(5.6) as fig:
        grid = fig.add_gridspec(2, rt.layout.H + 2, height_ratios=[1, 0.8],
                                width_ratios=[1] * rt.layout.H + [0.15, 2.1])
        _heads([fig.add_subplot(grid[0, h]) for h in range(rt.layout.H)], state)
        _verdict(fig.add_subplot(grid[0, -1]), rt, seq_len)
        _pages(fig.add_subplot(grid[1, :]), rt)
    metrics = {
        "seq_len": seq_len,
        "text_bytes": len(TEXT[:seq_len]),
        "tokens_per_page": tokens_per_page,
        "dtype": dtype,
        "page_bytes": rt.layout.page_bytes,
        "head_bytes": rt.layout.head_bytes,
        "heads_per_page": rt.layout.per_page,
        "pages_per_layer": rt.layout.pages,
        "unused_bytes": rt.layout.wasted_bytes,
        "no_split_head": rt.no_split_head,
        "kda_layers_checked": rt.layers,
        "max_abs_diff": rt.max_abs_diff,
        "bit_exact": rt.bit_exact,
        "head_slots": ",".join(f"{p}@{o}" for p, o in rt.slots),
    }
    return FigureResult(fig, metrics)
