"""Figure: the two-stage lookup of one request, step by step: stage 1 walks the request's
blocks while their hashes hit; stage 2 backs off to the last boundary with a complete, ready
checkpoint group; the words say why it stopped there."""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from core.experiments.prefix import lookup_steps, runs
from core.experiments.scenes import MAX_LOOKUP_STEPS
from core.prefix import entries as E
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE
from tabs.prefix.common import REASON_WORDS

Y_OUT = 0.0
H = 0.7
STATUS_WORD = {
    E.READY: "ready ✓", E.NO_CHECKPOINT: "none", E.EVICTED: "evicted", E.PARTIAL: "partial ✗",
    E.NOT_READY: "not ready", E.LAST_TOKEN: "last token",
}
BACK_OFF = {  # why stage 2 backs off past a boundary, as one step's words
    E.NO_CHECKPOINT: "holds no group (spacing)", E.EVICTED: "lost its group (evicted)",
    E.PARTIAL: "has a partial group (a KDA layer missing)",
    E.NOT_READY: "has a group not ready yet",
    E.LAST_TOKEN: "is the prompt's end (one token must still run)", E.READY: "is ready",
}
PASSED = {E.EVICTED: "evicted", E.PARTIAL: "partial (a KDA layer missing)",
          E.NOT_READY: "not ready"}
STATUS_COLOUR = {
    E.READY: ROLE["kda"], E.NO_CHECKPOINT: ROLE["neutral"], E.EVICTED: ROLE["miss"],
    E.PARTIAL: ROLE["rejected"], E.NOT_READY: ROLE["inflight"], E.LAST_TOKEN: ROLE["neutral"],
}
ROWS = ("in the cache:\nthe earlier prompt", "stage 1: walk the\nrequest's blocks",
        "stage 2: back off\nto a ready group", "the prefill")
# A projector: short row names and legend entries, step numbers alone on the blocks (the
# legend keys hit and miss), the legend in one row above.
LOOK = Projector(
    words={"evicted": "gone", "not\nwalked": "",
           **dict(zip(ROWS, ("cache", "stage 1", "stage 2", "prefill"), strict=True)),
           "complete, ready group": "ready group", "partial group": "partial",
           "evicted group": "evicted", "cached block": "cached"},
    legends="above", keys=(Patch(color=ROLE["hit"], label="hit"),
                           Patch(color=ROLE["miss"], label="miss")))


@dataclass(frozen=True, kw_only=True)
class RowsLayout:
    """Where the rows sit (data y; the prefill's at Y_OUT), the tokens a computed bar needs to
    hold its label, and the words under the rows."""

    cache: float  # the cached prompt's row
    request: float  # stage 1's row
    stage2: float  # stage 2's row
    inside: int  # the tokens a computed bar needs to hold its label
    why_x: float  # where the words under the rows start (data x)
    why_dy: float  # how far below the prefill bar they start
    linespacing: float  # their line spacing
    room: float  # how far the axes reaches below the prefill bar, for them
    in_layout: bool  # constrained layout makes room for them (else they wrap at the canvas edge)


# A projector's text takes more of the height: the rows further apart, more room in a bar; the
# words under the rows span the full width, wrapped at the canvas edge
ROWS_AT = Arrangement(
    normal=RowsLayout(cache=3.3, request=2.1, stage2=1.05, inside=150, why_x=0, why_dy=0.72,
                      linespacing=1.5, room=1.25, in_layout=True),
    projector=RowsLayout(cache=4.0, request=2.8, stage2=1.65, inside=260, why_x=-170,
                         why_dy=0.85, linespacing=1.3, room=2.2, in_layout=False))


def _block(ax, x0: float, w: float, y: float, face: str, label: str, *, edge: str | None = None,
           ls: str = "-", hatch: str | None = None, alpha: float = 1.0, dark: bool = False,
           fs: float = 9) -> None:
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


def _cached_row(ax, r, lay: RowsLayout) -> None:
    P, c = r.block_tokens, r.cached
    held = c.stage1_blocks
    for i in range(r.cached_full_blocks):
        if i < held:
            _block(ax, i * P, P, lay.cache, ROLE["mla"], f"{i + 1}", alpha=0.3, edge=ROLE["mla"])
        else:
            _block(ax, i * P, P, lay.cache, "white", "evicted", ls="--", edge=ROLE["miss"],
                   fs=8.5)
    for b, status in enumerate(c.boundary_status, start=1):
        _group_marker(ax, b * P, lay.cache, status)


def _request_row(ax, r, lay: RowsLayout, upto: int, words: list[str]) -> int:
    """Stage 1, one step per block, drawn up to step `upto`; returns the number of steps.
    Appends each step's description to `words`."""
    P, lk, n = r.block_tokens, r.lookup, r.request_tokens
    full, s1 = n // P, r.lookup.stage1_blocks
    step = 0
    for i in range(full):
        if i <= s1:
            step += 1
            hit = i < s1
            what = "hit" if hit else ("collision" if lk.collision else "miss")
            words.append(f"block {i + 1}'s hash is in the cache: walk on" if hit else
                         f"block {i + 1}: {what}, stage 1 stops after {s1} blocks")
            if step <= upto:  # a projector: the step number alone; the legend keys the colour
                _block(ax, i * P, P, lay.request, ROLE["hit"] if hit else ROLE["miss"],
                       brief(ax, f"{step}. {what}", f"{step}"), dark=True, fs=9)
                if step == upto:
                    _frame(ax, i * P, P, lay.request)
                continue
        _block(ax, i * P, P, lay.request, ROLE["empty"], "not\nwalked" if i > s1 else "", fs=8)
    if n > full * P:
        _block(ax, full * P, n - full * P, lay.request, "white", "tail", hatch="///", fs=8)
    return step


def _frame(ax, x0: float, w: float, y: float) -> None:
    """The current step: a heavy outline."""
    ax.add_patch(Rectangle((x0 + 0.5, y - H / 2 - 0.06), w - 1, H + 0.12, fill=False,
                           ec=ROLE["reference"], lw=2.4, zorder=6))


def _stage2_row(ax, r, lay: RowsLayout, step: int, upto: int, words: list[str]) -> int:
    """Stage 2, one step per boundary checked, drawn up to step `upto`; returns the last step."""
    P, lk, n = r.block_tokens, r.lookup, r.request_tokens
    s1, b = lk.stage1_blocks, lk.boundary_blocks
    if s1 == 0:
        if step <= upto:
            ax.text(0, lay.stage2, "no block matched: stage 2 has no boundary to check",
                    ha="left", va="center", fontsize=9, color=ROLE["annotation"])
        return step
    for j in range(s1, max(b, 1) - 1, -1):
        st = E.LAST_TOKEN if j * P >= n else lk.boundary_status[j - 1]
        usable = j == b
        step += 1
        words.append(f"block {j} has a complete, ready group: resume there" if usable else
                     f"block {j} {BACK_OFF[st]}: back off")
        if step > upto:
            continue
        colour = ROLE["hit"] if usable else STATUS_COLOUR[st]
        ax.plot([j * P], [lay.stage2], "o" if usable else "s", ms=10 if usable else 7,
                color=colour, mfc=colour if usable or st != E.NOT_READY else "white", zorder=5)
        if step == upto:
            ax.plot([j * P], [lay.stage2], "o", ms=17, mfc="none", mec=ROLE["reference"], mew=2.2,
                    zorder=6)
        word = "resume\nhere ✓" if usable else STATUS_WORD[st]
        # a projector: boundaries a block apart, the marker's colour says the status
        label = brief(ax, f"{step}. {word}", f"{step}\nresume" if usable else f"{step}")
        # after a back-off the resume label leans left, off the next boundary's label ("11.
        # resume" ran into "10. evicted" a block away), where the axes leave it room
        lean = usable and b < s1 and j >= 2
        ax.text(j * P + (0.2 * P if lean else 0), lay.stage2 - 0.22, label,
                ha="right" if lean else "center", va="top", fontsize=9,
                fontweight="bold" if usable else "normal")
    if b < s1 and step <= upto:
        ax.annotate("", xy=(max(b, 0) * P, lay.stage2 + 0.28), xytext=(s1 * P, lay.stage2 + 0.28),
                    arrowprops={"arrowstyle": "-|>", "color": ROLE["annotation"], "lw": 1.2})
        ax.text((s1 + max(b, 0)) * P / 2, lay.stage2 + 0.34, "back off", ha="center", va="bottom",
                fontsize=9)
    if b == 0 and step <= upto:
        ax.text(0, lay.stage2 - 0.22, "start:\nno state", ha="center", va="top", fontsize=9,
                color=ROLE["miss"], fontweight="bold")
    return step


def _outcome(ax, r, lay: RowsLayout) -> None:
    n, reused = r.request_tokens, r.reused_tokens
    fs = 9
    if reused:
        ax.add_patch(Rectangle((0, Y_OUT - H / 2), reused, H, facecolor=ROLE["hit"], lw=0))
        ax.text(reused / 2, Y_OUT, f"reused {reused} tokens", ha="center", va="center",
                fontsize=fs, color="white", fontweight="bold")
    ax.add_patch(Rectangle((reused, Y_OUT - H / 2), n - reused, H, facecolor=ROLE["neutral"],
                           lw=0))
    inside = n - reused >= lay.inside  # room for the label inside the bar
    ax.text((reused + n) / 2, Y_OUT if inside else Y_OUT - H / 2 - 0.05,
            f"computed {n - reused} tokens", ha="center", va="center" if inside else "top",
            fontsize=fs, color="white" if inside else "black", fontweight="bold")


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


@arranged_by(ROWS_AT)
def prefix_lookup(checkpoint_every: int, preset: str, step: int = MAX_LOOKUP_STEPS, *,
                  lay: RowsLayout) -> FigureResult:
    r = runs(checkpoint_every)[preset]
    lk, P = r.lookup, r.block_tokens
    # at the run's last step or past it, the whole run: the same figure, with no step framed
    upto = step if step < lookup_steps(checkpoint_every, preset) else MAX_LOOKUP_STEPS + 1
    words: list[str] = []
    with lab_figure(5.2, look=LOOK) as fig:
        ax = fig.subplots()
        _cached_row(ax, r, lay)
        total = _stage2_row(ax, r, lay, _request_row(ax, r, lay, upto, words), upto, words)
        done = step >= total
        if done:
            _outcome(ax, r, lay)
            shown = f"steps 1-{total} of {total}: all"
            below = _why(r)
        else:
            shown = f"steps 1-{step} of {total}"
            below = f"Step {step}: {words[step - 1]}.\nThe prefill is decided after step {total}."
        for y, label in zip((lay.cache, lay.request, lay.stage2, Y_OUT), ROWS, strict=True):
            ax.text(-14, y, label, ha="right", va="center", fontsize=9, fontweight="bold")
        xmax = max(r.request_tokens, r.cached_full_blocks * P) + 8
        why = ax.text(lay.why_x, Y_OUT - lay.why_dy, below, ha="left", va="top", fontsize=9,
                      linespacing=lay.linespacing)
        why.set_in_layout(lay.in_layout)
        ax.set_xlim(-170, xmax)
        ax.set_ylim(Y_OUT - lay.room, lay.cache + 1.05)
        ax.set_xticks(range(0, xmax, P))
        ax.set_yticks([])
        ax.grid(False)
        ax.spines["left"].set_visible(False)
        # a projector: the matched and resumed blocks are in the words below the rows
        ax.set_xlabel(brief(ax, f"token position (one block = {P} tokens = one MLA page per MLA "
                            "layer)", f"token position (one block = {P} tokens)"))
        ax.set_title(brief(ax, f"“{preset}”, a group every {checkpoint_every} block(s), {shown}"
                           + (f": stage 1 matched {lk.stage1_blocks} blocks, stage 2 resumes "
                              f"at block {lk.boundary_blocks}" if done else ""),
                           f"“{preset}”, k = {checkpoint_every}, {shown}"), fontsize=10, pad=26)
        handles = [
            Line2D([], [], marker="s", ls="", mfc=ROLE["kda"], mec=ROLE["kda"],
                   label="complete, ready group"),
            Line2D([], [], marker="D", ls="", mfc=ROLE["rejected"], mec=ROLE["rejected"],
                   label="partial group"),
            Line2D([], [], marker="X", ls="", mfc=ROLE["miss"], mec=ROLE["miss"],
                   label="evicted group"),
            Patch(facecolor=ROLE["mla"], alpha=0.3, edgecolor=ROLE["mla"], label="cached block"),
        ]
        ax.legend(handles=handles, loc="lower right", bbox_to_anchor=(1.0, 1.0),
                  ncols=len(handles), fontsize=9, borderaxespad=0.2)
        ax.tick_params(labelsize=9)
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
        "step": step, "lookup_steps": total, "complete": done,
        "current_step": words[min(step, total) - 1] if words else "",
    }
    return FigureResult(fig, metrics)
