"""Figure (the hero's): one request's path through the lab, drawn from one real run of the
engine. Six stages in the order the request meets them (left to right, then right to left),
each with what it did to this request and the tab that teaches it."""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from core.experiments.overview import PHASES, VNODES, RequestPath, path
from core.model.manifest import shipped_dims as dims
from tabs.figure import Arrangement, FigureResult, arranged_by, lab_figure
from tabs.overview.common import STAGES
from tabs.palette import ROLE
from tabs.units import fmt_bytes

TAB_DX = 0.012  # the tab line from the card's left (ha "left") or right (ha "right")


@dataclass(frozen=True, kw_only=True)
class Cards:
    """Where the six stage cards sit and where their texts go (axes fractions)."""

    w: float  # a card's width
    h: float  # a card's height
    cols: tuple[float, ...]  # each column's left edge
    rows: tuple[float, ...]  # each row's bottom edge
    order: tuple[tuple[int, int], ...]  # the stages' (row, col) in order (a snake)
    body_dy: float  # the body's top, below the card's top
    linespacing: float  # the body's line spacing
    tab_dy: float  # the tab line's baseline, above the card's bottom
    tab_ha: str  # the tab line at the card's "left" or "right" (TAB_DX in from that side)


# A projector's text is 1.75x larger on the same pixels: two columns of wider cards in three
# rows, the body closer under the title, the tab named at the bottom right.
CARDS = Arrangement(
    normal=Cards(w=0.29, h=0.42, cols=(0.02, 0.355, 0.69), rows=(0.565, 0.015),
                 order=((0, 0), (0, 1), (0, 2), (1, 2), (1, 1), (1, 0)), body_dy=0.12,
                 linespacing=1.45, tab_dy=0.025, tab_ha="left"),
    projector=Cards(w=0.475, h=0.318, cols=(0.01, 0.515), rows=(0.678, 0.341, 0.004),
                    order=((0, 0), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1)), body_dy=0.08,
                    linespacing=1.1, tab_dy=0.012, tab_ha="right"))


def _first_line(b: bytes, width: int = 30) -> str:
    line = b.decode("utf-8", errors="replace").splitlines()[0].strip()
    return line if len(line) <= width else line[: width - 3] + "..."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def stage_lines(p: RequestPath) -> tuple[tuple[str, ...], ...]:
    """What each stage did to this request, a few short lines each."""
    pre, dec = PHASES
    kda = p.layer_kinds.count("kda")
    prefix = (
        (f"stage 1: {p.matched_blocks} of {p.full_blocks} full blocks found",
         f"stage 2: resume at block {p.boundary_blocks} ({p.reason})",
         f"{p.reused_tokens} of {len(p.prompt)} tokens reused")
        if p.matched_blocks else
        (f"no block of {p.block_tokens} tokens found ({p.reason})",
         "0 tokens reused",
         f"publishes {_plural(p.published_blocks, 'block')} and "
         f"{_plural(p.published_groups, 'group')}"))
    decode = (
        (f"{p.passes} verify passes for {len(p.text) - 1} bytes",
         f"{p.accepted} of {p.drafted} drafts accepted",
         f"{p.replayed} positions replayed, {fmt_bytes(p.moved_bytes)} moved",
         f"{p.draft_loads} expert loads for drafts")
        if p.draft_len else
        (f"plain greedy: {p.passes} passes,", "one byte each",
         "nothing drafted, nothing to roll back"))
    return (
        (f"{len(p.prompt)} bytes of {p.kind} text", "one token per byte:",
         f"'{_first_line(p.prompt)}'"),
        prefix,
        (f"{p.computed_tokens} tokens computed:",
         f"{_plural(p.kda_chunks, 'chunk')} per KDA layer ({kda} layers)",
         f"pages: {p.prefill_pages.request_kda} KDA state, "
         f"{p.prefill_pages.request_mla} MLA"),
        (f"top-{dims().top_k} experts per token, {len(p.layer_kinds)} layers",
         f"prefill: {p.load_total(pre)} of {p.fetched_total(pre)} fetched loaded",
         f"decode: {p.load_total(dec)} of {p.fetched_total(dec)} loaded",
         f"({p.hit_rate:.0%} hits, {p.capacity} slots)"),
        decode,
        (f"key: first block's hash, ring at {p.ring_position:.3f}",
         f"{p.clusters} clusters x {VNODES} vnodes",
         f"-> cluster {p.primary}" + (f" (backup: {p.secondary})"
                                      if p.secondary is not None else "")),
    )


def _card(ax, c: Cards, x: float, y: float, n: int, title: str, lines: tuple[str, ...],
          tabs: tuple[str, ...], hero: bool) -> None:
    ax.add_patch(FancyBboxPatch((x, y), c.w, c.h, boxstyle="round,pad=0.005,rounding_size=0.015",
                                fc="#F7F7F7", ec=ROLE["replay"] if hero else ROLE["neutral"],
                                lw=2.0 if hero else 1.0, transform=ax.transAxes))
    ax.text(x + 0.012, y + c.h - 0.03, f"{n}  {title}", fontsize=10.5, fontweight="bold",
            va="top", transform=ax.transAxes, parse_math=False)
    ax.text(x + 0.012, y + c.h - c.body_dy, "\n".join(lines), fontsize=9.5, va="top",
            linespacing=c.linespacing, transform=ax.transAxes, parse_math=False)
    left = c.tab_ha == "left"
    ax.text(x + TAB_DX if left else x + c.w - TAB_DX, y + c.tab_dy,
            "tab: " + " · ".join(tabs), fontsize=8.5, style="italic", color=ROLE["replay"],
            ha=c.tab_ha, va="bottom", transform=ax.transAxes, parse_math=False)


def _arrow(ax, c: Cards, a: tuple[int, int], b: tuple[int, int]) -> None:
    (ra, ca), (rb, cb) = a, b
    if ra == rb:
        y = c.rows[ra] + c.h / 2
        right = cb > ca
        start = (c.cols[ca] + (c.w if right else 0), y)
        end = (c.cols[cb] + (0 if right else c.w), y)
    else:
        x = c.cols[ca] + c.w / 2
        start, end = (x, c.rows[ra]), (x, c.rows[rb] + c.h)
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14,
                                 color=ROLE["annotation"], lw=1.2, shrinkA=1, shrinkB=1,
                                 transform=ax.transAxes))


@arranged_by(CARDS)
def overview_path(draft_len: int, kind: str, capacity: int, warm: bool, clusters: int, *,
                  lay: Cards) -> FigureResult:
    p = path(draft_len, kind, capacity, warm, clusters)
    lines = stage_lines(p)
    with lab_figure(4.8) as fig:
        ax = fig.subplots()
        ax.set_axis_off()
        for i, ((row, col), (title, tabs), body) in enumerate(zip(lay.order, STAGES, lines,
                                                                    strict=True)):
            _card(ax, lay, lay.cols[col], lay.rows[row], i + 1, title, body, tabs, hero=i == 4)
            if i:
                _arrow(ax, lay, lay.order[i - 1], (row, col))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    pre, dec = PHASES
    return FigureResult(fig, {
        "kind": kind, "draft_len": draft_len, "capacity": capacity, "warm": warm,
        "clusters": clusters, "prompt_bytes": len(p.prompt), "generated_bytes": len(p.text),
        "matched_blocks": p.matched_blocks, "boundary_blocks": p.boundary_blocks,
        "lookup": p.reason, "reused_tokens": p.reused_tokens,
        "computed_tokens": p.computed_tokens, "kda_chunks": p.kda_chunks,
        "kda_state_pages": p.prefill_pages.request_kda,
        "mla_pages": p.prefill_pages.request_mla,
        "prefill_fetched": p.fetched_total(pre), "prefill_loads": p.load_total(pre),
        "decode_fetched": p.fetched_total(dec), "decode_loads": p.load_total(dec),
        "decode_hit_rate": p.hit_rate, "passes": p.passes, "drafted": p.drafted,
        "accepted": p.accepted, "replayed": p.replayed, "moved_bytes": p.moved_bytes,
        "draft_loads": p.draft_loads, "rejected_draft_loads": p.rejected_loads,
        "primary_cluster": p.primary, "secondary_cluster": p.secondary
        if p.secondary is not None else -1,
        "stage_tabs": " | ".join(" + ".join(t) for _, t in STAGES)})
