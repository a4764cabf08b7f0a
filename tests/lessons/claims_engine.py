"""Claims of the Engine lesson, computed from the tab's engine runs (core.experiments.engine on
the shipped model) and from core.kda.parallel."""

from __future__ import annotations

import functools
import math

from core.experiments.engine import SpecSweep, plain_text, spec_run
from core.experiments.scenes import GAMMAS, N_NEW
from core.kda.parallel import cp_crossover, cp_volume, k3_cp, toy_cp
from core.model.weights import load_model
from core.serve.prompts import KINDS, prompt
from tabs.engine import TAB
from tabs.units import fmt_bytes
from tests.lessons.registry import claim

DEFAULTS = TAB.defaults()


@functools.cache
def _sweep() -> SpecSweep:
    m = load_model()
    return SpecSweep.of((spec_run(m, k, g, N_NEW) for k in KINDS for g in GAMMAS),
                        {k: plain_text(m, k, N_NEW) for k in KINDS})


@claim("engine", "On the code prompt {a1:.0%} of drafts are accepted at gamma {g1} but {a8:.0%} "
       "at gamma {g8}: long guesses fail more often. Yet each pass yields more, {b1:.2f} bytes "
       "at gamma {g1} and {b8:.2f} at gamma {g8}.")
def acceptance_vs_gamma() -> dict[str, object]:
    sw = _sweep()
    g1, g8 = GAMMAS[0], GAMMAS[-1]
    for k in KINDS:  # the trade-off holds on every kind, not only the one quoted
        lo, hi = sw.run(k, g1), sw.run(k, g8)
        assert hi.acceptance < lo.acceptance
        assert hi.bytes_per_verify_pass > lo.bytes_per_verify_pass > 1.0
        # why more per pass: a pass emits its accepted drafts plus one byte of its own
        assert math.isclose(hi.bytes_per_verify_pass, hi.accepted_per_pass + 1.0)
    lo, hi = sw.run("code", g1), sw.run("code", g8)
    return {"a1": lo.acceptance, "a8": hi.acceptance, "g1": g1, "g8": g8,
            "b1": lo.bytes_per_verify_pass, "b8": hi.bytes_per_verify_pass}


def _state_bytes() -> int:
    d = load_model().dims
    return d.kda_heads * d.kda_head_dim**2 * d.bytes_per_param  # S: H dk dv


def _rollback_line() -> tuple[int, int]:
    """(fixed, per replayed position) bytes of the default request's rollbacks: every one of
    them lies on that line (checked), read from the engine's own counts."""
    r = _sweep().run(DEFAULTS["kind"], DEFAULTS["draft_len"])
    pts = sorted({(p.replayed, p.moved_bytes) for p in r.passes if p.replayed})
    assert len({n for n, _ in pts}) >= 2, "need two replay lengths to read off the line"
    (n1, m1), (n2, m2) = pts[0], pts[-1]
    per = (m2 - m1) // (n2 - n1)
    fixed = m1 - n1 * per
    assert all(m == fixed + n * per for n, m in pts)
    assert all(p.moved_bytes == 0 for p in r.passes if not p.replayed)  # kept whole: nothing
    return fixed, per


@claim("engine", "A rollback moves {fixed} plus {per} per replayed position: reading and writing "
       "the state dominates.")
def rollback_moves() -> dict[str, object]:
    fixed, per = _rollback_line()
    assert fixed == 2 * load_model().dims.n_kda * _state_bytes()  # S read and S written
    assert fixed > GAMMAS[-1] * per  # even replaying a whole window moves less than S does
    return {"fixed": fmt_bytes(fixed), "per": fmt_bytes(per)}


def _crossovers(P: int) -> tuple[float, float]:
    toy, k3 = toy_cp(load_model().dims), k3_cp()
    out = []
    for geo in (toy, k3):
        x = cp_crossover(geo, P)
        assert x is not None
        below, above = cp_volume(geo, math.floor(x), P), cp_volume(geo, math.ceil(x) + 1, P)
        assert below.kda >= below.mla_ring and above.kda < above.mla_ring
        out.append(x)
    return out[0], out[1]


@claim("engine", "With P = {P}, KDA moves more bytes below {toy:,.0f} tokens on the tiny model "
       "and below {k3:,.0f} on [[K3]], and less above.")
def cp_crossover_default() -> dict[str, object]:
    P = DEFAULTS["ranks"]
    toy, k3 = _crossovers(P)
    return {"P": P, "toy": toy, "k3": k3}


@claim("engine", "code is {code} bytes of getters and setters from xml/sax/xmlreader.py, records "
       "{records} bytes of a generated records file (one JSON object a line), prose {prose} "
       "bytes of the pydoc topic on the debugger. Each request generates {n_new} bytes")
def prompts() -> dict[str, object]:
    sizes = {k: len(prompt(k)) for k in KINDS}
    assert prompt("records").count(b"\n{") + 1 == prompt("records").count(b"\n")  # a line each
    return {**sizes, "n_new": N_NEW}


@claim("engine", "At gamma {g} the code, records and prose prompts accept {code:.0%}, "
       "{records:.0%} and {prose:.0%} of their drafts.")
def acceptance_at_default() -> dict[str, object]:
    g = DEFAULTS["draft_len"]
    return {"g": g, **{k: _sweep().run(k, g).acceptance for k in KINDS}}


@claim("engine", "the state S ({state}) read and written, and {raw} of raw inputs (q, k, v, g, "
       "beta and the pre-conv row) read per replayed position.")
def rollback_pieces() -> dict[str, object]:
    d = load_model().dims
    _, per = _rollback_line()
    raw = d.kda_heads * (4 * d.kda_head_dim + 1) + 3 * d.kda_inner  # q k g v beta, conv row
    assert per == d.n_kda * raw * d.bytes_per_param
    return {"state": fmt_bytes(_state_bytes()), "raw": fmt_bytes(per // d.n_kda)}


@claim("engine", "at the defaults {held} of raw inputs per pass, where one snapshot per window "
       "position would hold {snap}.")
def held_vs_snapshots() -> dict[str, object]:
    r = _sweep().run(DEFAULTS["kind"], DEFAULTS["draft_len"])
    n = len(r.passes)
    assert r.held_bytes < r.snapshot_bytes
    return {"held": fmt_bytes(r.held_bytes / n), "snap": fmt_bytes(r.snapshot_bytes / n)}


@claim("engine", "{toy_msg} per layer on the tiny model, {k3_msg} at K3. Counting every layer "
       "(all KDA layers against all MLA layers) the crossover at P = {P} is {toy:,.0f} tokens on "
       "the tiny model and {k3:,.0f} at K3.")
def cp_messages() -> dict[str, object]:
    P = DEFAULTS["ranks"]
    toy, k3 = toy_cp(load_model().dims), k3_cp()
    tm, km = cp_crossover(toy, P, whole_model=True), cp_crossover(k3, P, whole_model=True)
    assert tm is not None and km is not None
    v = cp_volume(k3, math.ceil(km) + 1, P)
    assert v.model_kda < v.model_mla
    return {"toy_msg": fmt_bytes(toy.message_bytes), "k3_msg": fmt_bytes(k3.message_bytes),
            "P": P, "toy": tm, "k3": km}
