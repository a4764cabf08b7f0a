"""Figure: the model's state stored in one page pool at the chosen length (MLA block tables
grow, KDA page groups do not), and the pages in use at every length up to the slider's end."""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from core.experiments.paging import growth, stored
from core.experiments.scenes import POOL_PAGES
from core.model.manifest import shipped_dims as dims
from core.paging.ledger import toy_geometry
from core.paging.pool import PageKind
from tabs.figure import (
    Arrangement,
    FigureResult,
    Projector,
    arranged_by,
    brief,
    lab_figure,
    shorten,
)
from tabs.glyphs import labels as glyph_labels
from tabs.palette import ROLE

KIND_COLOUR = {PageKind.MLA_KV: ROLE["mla"], PageKind.KDA_STATE: ROLE["kda"]}
SHORT = {"conv tail": "conv"}
# Normal mode: the axes where constrained layout put them (table, curve; the same at every
# length and page size: labels keep their widths, the legend its place). Constrained layout cost
# ~1/3 of a redraw; presenting keeps it (projector text needs the room found afresh).
POS = {"table": (0.07628, 0.51185, 0.75319, 0.45359), "curve": (0.07628, 0.06553, 0.75319, 0.34892)}
MIN_COLS = 4
CURVE_TITLE = "Pages in use at every length: one step per page boundary, in every MLA layer"


@dataclass(frozen=True, kw_only=True)
class GrowthLayout:
    cell_pt: float | None  # the page ids in the table's cells; None: sized by its columns
    cell_roles: bool  # a kind's first row names each page's role under its id
    cross_leader: dict | None  # the line from the crossover's note to its dot; None: no line


# a projector: page ids alone in the cells, at 8 pt (one line fits a cell); the crossover's dot
# keyed in the legend instead of annotated over the lines
GROWTH = Arrangement(
    normal=GrowthLayout(cell_pt=None, cell_roles=True,
                        cross_leader={"arrowstyle": "-", "color": ROLE["mla"], "lw": 0.8}),
    projector=GrowthLayout(cell_pt=8.0, cell_roles=False, cross_leader=None))


PART_ALPHA = 0.4  # a part-filled page's tint


def _look(cross: int | None) -> Projector:
    """A projector: the curve's legend below the panels (its colours key the table's too), the
    crossover's dot keyed there instead of annotated over the lines; shorter titles and labels,
    page ids alone in the cells (larger)."""
    keys = () if cross is None else (
        Line2D([], [], ls="none", marker="o", ms=5, color=ROLE["mla"],
               label=f"MLA > KDA from {cross} tokens"),)
    return Projector(words={CURVE_TITLE: "Pages in use at every length"}, legends="below",
                     keys=keys)


def _place(fig: Figure) -> None:
    table, curve = fig.axes
    table.set_position(POS["table"])
    curve.set_position(POS["curve"])


def _label(what: str) -> str:
    return SHORT.get(what, what.replace("block ", "blk ").replace("S heads ", "S ")
                     .replace("S head ", "S "))


def _table(ax, s, cols: int, lay: GrowthLayout) -> None:
    kinds = s.layer_kinds
    text = cols <= 24  # every page's id (1,024 tokens at P = 64 is 17 columns)
    size = lay.cell_pt
    if size is None:  # sized by the table's columns
        size = 9.0 if cols <= 8 else 6.5 if text else 5.5
    first = {k: kinds.index(k) for k in set(kinds)}  # roles are labelled on one row per kind
    labels = {"white": ([], []), "black": ([], [])}  # colour: (positions, texts)
    for layer in range(len(kinds)):
        cells = s.layer_cells(layer)
        colour = KIND_COLOUR[cells[0].kind]
        y = (layer - 0.4, 0.8)
        # one collection per row and part: a long table stays cheap to draw
        ax.broken_barh([(c + 0.05, 0.9) for c in range(len(cells))], y,
                       facecolors=ROLE["empty"], edgecolors=colour, lw=0.9)
        # a part-filled page's fill is a light tint, so its id, centred in black, reads over
        # both parts (in white over the edge it was cut by the fill's edge)
        tint = to_rgba(colour, PART_ALPHA)
        ax.broken_barh([(c + 0.05, 0.9 * cell.fill) for c, cell in enumerate(cells)], y,
                       facecolors=[colour if cell.fill == 1.0 else tint for cell in cells],
                       lw=0)
        for c, cell in enumerate(cells):
            xy, words = labels["white" if cell.fill == 1.0 else "black"]
            at = c + 0.5
            if text:
                named = lay.cell_roles and first[kinds[layer]] == layer
                role = f"\n{_label(cell.what)}" if named else ""
                xy.append((at, layer))
                words.append(f"p{cell.page}{role}")
            elif c in (0, len(cells) - 1):  # a long table: its ends only
                xy.append((at, layer))
                words.append(f"{cell.page}")
    for colour, (xy, words) in labels.items():
        glyph_labels(ax, xy, words, size, colour)  # one collection (glyphs.py)
    ax.set_xlim(0, cols)
    ax.set_ylim(len(kinds) - 0.5, -0.5)
    ax.set_yticks(range(len(kinds)), [f"layer {i} {k.upper()}" for i, k in enumerate(kinds)])
    ax.set_xticks([])
    ax.grid(False)
    ax.tick_params(axis="y", length=0)


def _curve(ax, g, seq_len: int, P: int, lay: GrowthLayout) -> None:
    x = range(g.max_tokens + 1)
    total = [m + k for m, k in zip(g.mla_pages, g.kda_pages, strict=True)]
    ax.step(x, g.mla_pages, where="post", color=ROLE["mla"], label="MLA pages (grow)")
    ax.step(x, g.kda_pages, where="post", color=ROLE["kda"], label="KDA pages (constant)")
    ax.step(x, total, where="post", color=ROLE["reference"], lw=1.0, label="all pages")
    ax.axhline(POOL_PAGES, color=ROLE["neutral"], ls=":", lw=1.0,
               label=f"pool: {POOL_PAGES} pages")
    ax.axvline(seq_len, color=ROLE["annotation"], ls="--", lw=1.0)
    right = seq_len > 0.7 * g.max_tokens  # keep the label inside the axes
    ax.annotate(f"length {seq_len}: {total[seq_len]} pages", (seq_len, total[seq_len]),
                xytext=(-6 if right else 6, 12), textcoords="offset points", fontsize=8,
                fontweight="bold", ha="right" if right else "left")
    cross = g.mla_overtakes_kda
    if cross is not None:
        ax.plot([cross], [g.mla_pages[cross]], "o", color=ROLE["mla"], ms=5)
        shorten(ax.annotate(f"MLA pages > KDA pages from {cross} tokens",
                            (cross, g.mla_pages[cross]), xytext=(-40, 52),
                            textcoords="offset points", fontsize=7.5, ha="center",
                            arrowprops=lay.cross_leader), "")
    ax.set_xlim(0, g.max_tokens)
    ax.set_ylim(0, POOL_PAGES * 1.08)
    ax.set_xticks(range(0, g.max_tokens + 1, 128))
    ax.vlines(range(P, g.max_tokens, P), 0, POOL_PAGES * 1.08, color=ROLE["grid"], lw=0.5,
              zorder=0)
    ax.set_yticks(range(0, POOL_PAGES + 1, 32))
    ax.set_xlabel(brief(ax, f"sequence length (tokens); thin lines: page boundaries every P = {P}",
                        f"sequence length (tokens); a thin line every P = {P}"))
    ax.set_ylabel("pages in use")
    ax.set_title(CURVE_TITLE)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))


@arranged_by(GROWTH)
def paging_growth(seq_len: int, tokens_per_page: int, *, lay: GrowthLayout) -> FigureResult:
    P = tokens_per_page
    s, g, geo = stored(seq_len, P), growth(P), toy_geometry(dims(), P)
    # as many columns as the longest row needs, and room for MIN_COLS: at the default length a
    # row of 3 pages fills the panel instead of a fifth of it (cells and their ids readable)
    cols = max(MIN_COLS, max(len(s.layer_cells(i)) for i in range(len(s.layer_kinds))) + 1)
    mla_cells = s.layer_cells(dims().layer_kinds.index("mla"))
    mla_per_layer, last = len(mla_cells), round(mla_cells[-1].fill * P)
    nxt = mla_per_layer * P  # the table's capacity in tokens
    with lab_figure(6.8, look=_look(g.mla_overtakes_kda), place=_place) as fig:
        table, curve = fig.subplots(2, 1, gridspec_kw={"height_ratios": [1.3, 1]})
        _table(table, s, cols, lay)
        table.set_title(brief(table, f"The pool at length {seq_len}, P = {P} tokens per page: "
                              f"each layer's pages (p = physical page id from the one free list)",
                              f"The pool at length {seq_len}, P = {P}: physical page ids"))
        table.set_xlabel(brief(
            table, f"blue: MLA latent pages; block i holds tokens [iP, iP + P), the last "
            f"holds {last} of {P} and token {nxt + 1} opens a new page in every "
            f"MLA layer\ngreen: KDA state pages (S in whole heads, conv tail), the "
            f"same at every length; a part-filled page is tinted, its unused bytes white",
            f"last MLA page holds {last} of {P}; token {nxt + 1} opens the next"))
        _curve(curve, g, seq_len, P, lay)
    metrics = {
        "seq_len": seq_len,
        "tokens_per_page": P,
        "page_bytes": geo.page_bytes,
        "mla_pages": g.mla_pages[seq_len],
        "kda_pages": g.kda_pages[seq_len],
        "free_pages": s.free_pages,
        "mla_pages_per_layer": mla_per_layer,
        "last_page_tokens": last,
        "next_page_at_token": nxt + 1,
        "kda_pages_per_layer": geo.kda_pages_per_layer,
        "kda_heads_per_page": geo.heads.per_page,
        "mla_pages_exceed_kda_from": g.mla_overtakes_kda if g.mla_overtakes_kda else -1,
        "byte_crossover_tokens": geo.crossover_tokens,
        "pool_matches_ledger": g.matches_ledger,
        "stored_roundtrip_max_abs": s.max_abs_roundtrip,
    }
    return FigureResult(fig, metrics)
