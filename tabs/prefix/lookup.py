"""Figure: the two-stage lookup of one request, step by step: stage 1 walks the request's
blocks while their hashes hit; stage 2 backs off to the last boundary with a complete, ready
checkpoint group; the words say why it stopped there."""

from __future__ import annotations

from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from core.prefix import entries as E
from tabs.figure import FigureResult, lab_figure
from tabs.palette import ROLE
from tabs.prefix.common import REASON_WORDS, runs

Y_CACHE, Y_REQ, Y_STAGE2, Y_OUT = 3.3, 2.1, 1.05, 0.0
H = 0.7
STATUS_WORD = {
    E.READY: "ready ✓", E.NO_CHECKPOINT: "none", E.EVICTED: "evicted", E.PARTIAL: "partial ✗",
    E.NOT_READY: "not ready", E.LAST_TOKEN: "last token",
}
PASSED = {E.EVICTED: "evicted", E.PARTIAL: "partial (a KDA layer missing)",
          E.NOT_READY: "not ready"}
STATUS_COLOUR = {
    E.READY: ROLE["kda"], E.NO_CHECKPOINT: ROLE["neutral"], E.EVICTED: ROLE["miss"],
    E.PARTIAL: ROLE["rejected"], E.NOT_READY: ROLE["inflight"], E.LAST_TOKEN: ROLE["neutral"],
}


def _block(ax, x0: float, w: float, y: float, face: str, label: str, *, edge: str | None = None,
           ls: str = "-", hatch: str | None = None, alpha: float = 1.0, dark: bool = False,
           fs: float = 7.5) -> None:
    ax.add_patch(Rectangle((x0 + 1.5, y - H / 2), w - 3, H, facecolor=face, alpha=alpha,
                           edgecolor=edge or ROLE["annotation"], lw=0.8, ls=ls, hatch=hatch))
    ax.text(x0 + w / 2, y, label, ha="center", va="center", fontsize=fs,
            color="white" if dark else "black")


def _group_marker(ax, x: float, y: float, status: str) -> None:
    if status == E.NO_CHECKPOINT:
        return
    marker = {E.EVICTED: "X", E.PARTIAL: "D"}.get(status, "s")
    face = "white" if status == E.NOT_READY else STATUS_COLOUR[status]
    ax.plot([x], [y + H / 2 + 0.13], marker, ms=7, mfc=face, mec=STATUS_COLOUR[status], mew=1.2,
            clip_on=False, zorder=5)


def _cached_row(ax, r) -> None:
    P, c = r.block_tokens, r.cached
    held = c.stage1_blocks
    for i in range(r.cached_full_blocks):
        if i < held:
            _block(ax, i * P, P, Y_CACHE, ROLE["mla"], f"{i + 1}", alpha=0.3, edge=ROLE["mla"])
        else:
            _block(ax, i * P, P, Y_CACHE, "white", "evicted", ls="--", edge=ROLE["miss"], fs=6.5)
    for b, status in enumerate(c.boundary_status, start=1):
        _group_marker(ax, b * P, Y_CACHE, status)


def _request_row(ax, r) -> int:
    """Stage 1, one step per block; returns the number of steps drawn."""
    P, lk, n = r.block_tokens, r.lookup, r.request_tokens
    full, s1 = n // P, r.lookup.stage1_blocks
    step = 0
    for i in range(full):
        if i < s1:
            step += 1
            _block(ax, i * P, P, Y_REQ, ROLE["hit"], f"{step}. hit", dark=True)
        elif i == s1:
            step += 1
            _block(ax, i * P, P, Y_REQ, ROLE["miss"],
                   f"{step}. {'collision' if lk.collision else 'miss'}", dark=True)
        else:
            _block(ax, i * P, P, Y_REQ, ROLE["empty"], "not\nwalked", fs=6.5)
    if n > full * P:
        _block(ax, full * P, n - full * P, Y_REQ, "white", "tail", hatch="///", fs=6.5)
    return step


def _stage2_row(ax, r, step: int) -> None:
    P, lk, n = r.block_tokens, r.lookup, r.request_tokens
    s1, b = lk.stage1_blocks, lk.boundary_blocks
    if s1 == 0:
        ax.text(0, Y_STAGE2, "no block matched: stage 2 has no boundary to check",
                ha="left", va="center", fontsize=8, color=ROLE["annotation"])
        return
    for j in range(s1, max(b, 1) - 1, -1):
        st = E.LAST_TOKEN if j * P >= n else lk.boundary_status[j - 1]
        usable = j == b
        step += 1
        colour = ROLE["hit"] if usable else STATUS_COLOUR[st]
        ax.plot([j * P], [Y_STAGE2], "o" if usable else "s", ms=9 if usable else 6, color=colour,
                mfc=colour if usable or st != E.NOT_READY else "white", zorder=5)
        word = "resume\nhere ✓" if usable else STATUS_WORD[st]
        ax.text(j * P, Y_STAGE2 - 0.2, f"{step}. {word}", ha="center", va="top", fontsize=6.8,
                fontweight="bold" if usable else "normal")
    if b < s1:
        ax.annotate("", xy=(max(b, 0) * P, Y_STAGE2 + 0.28), xytext=(s1 * P, Y_STAGE2 + 0.28),
                    arrowprops={"arrowstyle": "-|>", "color": ROLE["annotation"], "lw": 1.2})
        ax.text((s1 + max(b, 0)) * P / 2, Y_STAGE2 + 0.34, "back off", ha="center", va="bottom",
                fontsize=7.5)
    if b == 0:
        ax.text(0, Y_STAGE2 - 0.2, "start:\nno state", ha="center", va="top", fontsize=6.8,
                color=ROLE["miss"], fontweight="bold")


def _outcome(ax, r) -> None:
    n, reused = r.request_tokens, r.reused_tokens
    if reused:
        ax.add_patch(Rectangle((0, Y_OUT - H / 2), reused, H, facecolor=ROLE["hit"], lw=0))
        ax.text(reused / 2, Y_OUT, f"reused {reused} tokens", ha="center", va="center",
                fontsize=8, color="white", fontweight="bold")
    ax.add_patch(Rectangle((reused, Y_OUT - H / 2), n - reused, H, facecolor=ROLE["neutral"],
                           lw=0))
    inside = n - reused >= 150  # room for the label inside the bar
    ax.text((reused + n) / 2, Y_OUT if inside else Y_OUT - H / 2 - 0.05,
            f"computed {n - reused} tokens", ha="center", va="center" if inside else "top",
            fontsize=8, color="white" if inside else "black", fontweight="bold")


def _why(r) -> str:
    """The lookup's reason in words, plus unusable groups passed on the way back."""
    lk = r.lookup
    words = f"Why block {lk.boundary_blocks} and not deeper: {REASON_WORDS[lk.reason]}."
    passed = [f"block {j}'s group is {PASSED[st]}"
              for j in range(lk.stage1_blocks - 1, lk.boundary_blocks, -1)
              if (st := lk.boundary_status[j - 1]) in PASSED]
    if passed:
        words += "\nOn the way back: " + "; ".join(passed) + "."
    if lk.stage1_blocks and not lk.boundary_blocks:
        words += "\nNo matched boundary holds a usable group: the prefill starts from scratch."
    return words


def prefix_lookup(checkpoint_every: int, preset: str) -> FigureResult:
    r = runs(checkpoint_every)[preset]
    lk, P = r.lookup, r.block_tokens
    with lab_figure(5.0) as fig:
        ax = fig.subplots()
        _cached_row(ax, r)
        step = _request_row(ax, r)
        _stage2_row(ax, r, step)
        _outcome(ax, r)
        for y, label in ((Y_CACHE, "in the cache:\nthe earlier prompt"),
                         (Y_REQ, "stage 1: walk the\nrequest's blocks"),
                         (Y_STAGE2, "stage 2: back off\nto a ready group"),
                         (Y_OUT, "the prefill")):
            ax.text(-14, y, label, ha="right", va="center", fontsize=8, fontweight="bold")
        ax.text(0, Y_OUT - 0.72, _why(r), ha="left", va="top", fontsize=8.5, linespacing=1.5)
        xmax = max(r.request_tokens, r.cached_full_blocks * P) + 8
        ax.set_xlim(-170, xmax)
        ax.set_ylim(Y_OUT - 1.25, Y_CACHE + 1.05)
        ax.set_xticks(range(0, xmax, P))
        ax.set_yticks([])
        ax.grid(False)
        ax.spines["left"].set_visible(False)
        ax.set_xlabel(f"token position (one block = {P} tokens = one MLA page per MLA layer)")
        ax.set_title(f"Preset “{preset}”, a checkpoint group every {checkpoint_every} block(s): "
                     f"stage 1 matched {lk.stage1_blocks} blocks, stage 2 resumes at block "
                     f"{lk.boundary_blocks}")
        ax.legend(handles=[
            Line2D([], [], marker="s", ls="", mfc=ROLE["kda"], mec=ROLE["kda"],
                   label="complete, ready group"),
            Line2D([], [], marker="D", ls="", mfc=ROLE["rejected"], mec=ROLE["rejected"],
                   label="partial group"),
            Line2D([], [], marker="X", ls="", mfc=ROLE["miss"], mec=ROLE["miss"],
                   label="evicted group"),
            Patch(facecolor=ROLE["mla"], alpha=0.3, edgecolor=ROLE["mla"], label="cached block"),
        ], loc="upper right", bbox_to_anchor=(1.0, 1.0), ncols=4, fontsize=7.5)
    metrics = {
        "preset": preset,
        "checkpoint_every": checkpoint_every,
        "request_tokens": r.request_tokens,
        "cached_blocks_held": r.cached.stage1_blocks,
        "stage1_blocks": lk.stage1_blocks,
        "boundary_blocks": lk.boundary_blocks,
        "reason": lk.reason,
        "boundary_status": ",".join(lk.boundary_status),
        "reused_tokens": r.reused_tokens,
        "computed_tokens": r.computed_tokens,
        "evicted_entries": r.evicted_entries,
    }
    return FigureResult(fig, metrics)
