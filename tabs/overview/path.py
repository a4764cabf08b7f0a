"""Figure (the hero's): one request's path through the lab, drawn from one real run of the
engine. Six stages in the order the request meets them (left to right, then right to left),
each with what it did to this request and the tab that teaches it."""

from __future__ import annotations

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from core.experiments.overview import PHASES, VNODES, RequestPath, path
from core.model.manifest import shipped_dims as dims
from tabs.figure import FigureResult, lab_figure
from tabs.overview.common import STAGES
from tabs.palette import ROLE
from tabs.units import fmt_bytes

W, H = 0.29, 0.42  # card size, axes fraction
COLS = (0.02, 0.355, 0.69)  # left edge of each column
ROWS = (0.565, 0.015)  # bottom edge of each row
ORDER = ((0, 0), (0, 1), (0, 2), (1, 2), (1, 1), (1, 0))  # (row, col): a snake


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


def _card(ax, x: float, y: float, n: int, title: str, lines: tuple[str, ...],
          tabs: tuple[str, ...], hero: bool) -> None:
    ax.add_patch(FancyBboxPatch((x, y), W, H, boxstyle="round,pad=0.005,rounding_size=0.015",
                                fc="#F7F7F7", ec=ROLE["replay"] if hero else ROLE["neutral"],
                                lw=2.0 if hero else 1.0, transform=ax.transAxes))
    ax.text(x + 0.012, y + H - 0.03, f"{n}  {title}", fontsize=10.5, fontweight="bold",
            va="top", transform=ax.transAxes, parse_math=False)
    ax.text(x + 0.012, y + H - 0.12, "\n".join(lines), fontsize=9.5, va="top",
            linespacing=1.45, transform=ax.transAxes, parse_math=False)
    ax.text(x + 0.012, y + 0.025, "tab: " + " · ".join(tabs), fontsize=8.5, style="italic",
            color=ROLE["replay"], va="bottom", transform=ax.transAxes, parse_math=False)


def _arrow(ax, a: tuple[int, int], b: tuple[int, int]) -> None:
    (ra, ca), (rb, cb) = a, b
    if ra == rb:
        y = ROWS[ra] + H / 2
        right = cb > ca
        start = (COLS[ca] + (W if right else 0), y)
        end = (COLS[cb] + (0 if right else W), y)
    else:
        x = COLS[ca] + W / 2
        start, end = (x, ROWS[ra]), (x, ROWS[rb] + H)
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14,
                                 color=ROLE["annotation"], lw=1.2, shrinkA=1, shrinkB=1,
                                 transform=ax.transAxes))


def overview_path(draft_len: int, kind: str, capacity: int, warm: bool,
                  clusters: int) -> FigureResult:
    p = path(draft_len, kind, capacity, warm, clusters)
    lines = stage_lines(p)
    with lab_figure(4.8) as fig:
        ax = fig.subplots()
        ax.set_axis_off()
        for i, ((row, col), (title, tabs), body) in enumerate(zip(ORDER, STAGES, lines,
                                                                    strict=True)):
            _card(ax, COLS[col], ROWS[row], i + 1, title, body, tabs, hero=i == 4)
            if i:
                _arrow(ax, ORDER[i - 1], (row, col))
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
