"""Figure (the hero's): speculative decoding against draft length on three prompt kinds. Left,
the share of drafted bytes the model accepted; right, the bytes each verify pass adds, which
plain greedy decoding makes one forward pass each. Counts only: the measured speedup is in the
live panel, never here."""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.ticker import FixedLocator, PercentFormatter

from core.experiments.engine import sweep
from core.experiments.scenes import GAMMAS
from tabs.engine.common import KIND_STYLE
from tabs.figure import Arrangement, FigureResult, Projector, arranged_by, brief, lab_figure
from tabs.palette import ROLE

# A projector: the prompt kinds' key under both panels, shorter words.
LOOK = Projector(words={
    "draft length gamma (most bytes drafted per verify pass)": "draft length gamma",
    "Acceptance falls as the guesses get longer": "Longer drafts: less accepted",
    "Yet each pass yields more bytes": "Yet more bytes per pass",
    "bytes generated per verify pass (mean)": "bytes per verify pass (mean)",
    "plain greedy: 1 byte per pass": "plain: 1 byte"}, legends="below")


@dataclass(frozen=True, kw_only=True)
class AcceptanceLayout:
    plain_end: str  # the plain line's name: at its "right" end, or the end "far" from gamma
    note_side: str  # the chosen gamma's notes: "right" of it, or on the "roomier" side
    notes_in_layout: bool  # whether the layout makes room for the chosen gamma's notes


# a projector: the chosen gamma's note on the roomier side of its line, the plain line's name at
# the end of that line farther from it (neither crossed by the gamma line); the notes stay out
# of the layout (in it, one near the right edge squeezed its panel to nothing)
ACCEPTANCE = Arrangement(
    normal=AcceptanceLayout(plain_end="right", note_side="right", notes_in_layout=True),
    projector=AcceptanceLayout(plain_end="far", note_side="roomier", notes_in_layout=False))


def _hero(ax, gamma: int) -> None:
    ax.axvline(gamma, color=ROLE["annotation"], ls="--", lw=0.9, zorder=1)
    ax.set_xlim(GAMMAS[0] - 0.4, GAMMAS[-1] + 0.4)
    ax.xaxis.set_major_locator(FixedLocator(GAMMAS))
    ax.set_xlabel("draft length gamma (most bytes drafted per verify pass)")


@arranged_by(ACCEPTANCE)
def engine_acceptance(draft_len: int, kind: str, *, lay: AcceptanceLayout) -> FigureResult:
    sw, g = sweep(), draft_len
    metrics: dict[str, float | int | str] = {"draft_len": g, "kind": kind, "n_new": sw.n_new}
    with lab_figure(4.0, look=LOOK) as fig:
        acc_ax, bpp_ax = fig.subplots(1, 2)
        for k in sw.kinds:
            color, marker = KIND_STYLE[k]
            me = k == kind
            style = dict(color=color, marker=marker, lw=2.4 if me else 1.2,
                         ms=6 if me else 4, alpha=1.0 if me else 0.75)
            acc = sw.series(k, "acceptance")
            bpp = sw.series(k, "bytes_per_verify_pass")
            acc_ax.plot(GAMMAS, acc, label=k, **style)
            bpp_ax.plot(GAMMAS, bpp, label=k, **style)
            r = sw.run(k, g)
            metrics[f"{k}_acceptance_at_gamma"] = r.acceptance
            metrics[f"{k}_bytes_per_verify_pass_at_gamma"] = r.bytes_per_verify_pass
            metrics[f"{k}_passes_at_gamma"] = len(r.passes)
            metrics[f"{k}_acceptance_gamma_1"] = acc[0]
            metrics[f"{k}_acceptance_gamma_{GAMMAS[-1]}"] = acc[-1]
        for ax in (acc_ax, bpp_ax):
            _hero(ax, g)
        acc_ax.set_ylim(0, 1.05)
        acc_ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        acc_ax.set_ylabel("drafted bytes accepted")
        acc_ax.set_title("Acceptance falls as the guesses get longer")
        acc_ax.legend(title="prompt kind", loc="lower left", ncol=3)
        top = max(max(sw.series(k, "bytes_per_verify_pass")) for k in sw.kinds)
        bpp_ax.axhline(1.0, color=ROLE["neutral"], lw=1.0, ls=":")
        plain_left = lay.plain_end == "far" and g - GAMMAS[0] > GAMMAS[-1] - g
        bpp_ax.text(GAMMAS[0] - 0.3 if plain_left else GAMMAS[-1] + 0.3, 1.04,
                    "plain greedy: 1 byte per pass", ha="left" if plain_left else "right",
                    va="bottom", fontsize=8, color=ROLE["annotation"])
        bpp_ax.set_ylim(0, top * 1.2)
        bpp_ax.set_ylabel("bytes generated per verify pass (mean)")
        bpp_ax.set_title("Yet each pass yields more bytes")
        r = sw.run(kind, g)
        if lay.note_side == "roomier":  # left of the gamma line when it is right of centre
            right = g > (GAMMAS[0] + GAMMAS[-1]) / 2
            aside = g - 0.25 if right else g + 0.25
            acc_at, acc_coords, bpp_at = (aside, 0.9), "data", (aside, 0.3)
            note_ha = "right" if right else "left"
        else:
            acc_at, acc_coords, bpp_at, note_ha = (8, 10), "offset points", (g + 0.15, 0.3), "left"
        notes = (acc_ax.annotate(brief(acc_ax, f"{kind}, gamma {g}: {r.accepted} of "
                                       f"{r.drafted}", f"{kind}: {r.accepted} of {r.drafted}"),
                                 (g, r.acceptance),
                                 xytext=acc_at, textcoords=acc_coords, ha=note_ha,
                                 fontsize=8, color=ROLE["annotation"]),
                 bpp_ax.annotate(brief(bpp_ax, f"{kind}, gamma {g}: {r.bytes_per_verify_pass:.2f}"
                                       f" bytes per pass\n({len(r.passes)} passes for "
                                       f"{sw.n_new - 1} bytes)",
                                       f"{kind}: {r.bytes_per_verify_pass:.2f} per pass"),
                                 (g, r.bytes_per_verify_pass),
                                 xytext=bpp_at, textcoords="data", ha=note_ha,
                                 fontsize=8, color=ROLE["annotation"],
                                 arrowprops=dict(arrowstyle="-", color=ROLE["annotation"],
                                                 lw=0.6)))
        for note in notes:
            note.set_in_layout(lay.notes_in_layout)
    metrics["same_text_as_plain_greedy"] = True  # SpecSweep.of raises otherwise
    return FigureResult(fig, metrics)
