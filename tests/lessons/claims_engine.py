"""Claims of the Engine lesson, computed from the tab's engine runs (core.experiments.engine on
the shipped model) and from core.kda.parallel."""

from __future__ import annotations

import functools
import math

import torch

from core.experiments.engine import SpecSweep, plain_text, spec_run
from core.experiments.scenes import GAMMAS, N_NEW
from core.experiments.speculation import expected_bytes, verify_tax
from core.kda.parallel import cp_crossover, cp_volume, k3_cp, toy_cp
from core.model.weights import load_model
from core.serve.prompts import KINDS, prompt
from core.serve.speculative import accept
from core.speculative.drafts import DraftProjections, verify_and_replay
from tabs.engine import TAB
from tabs.units import fmt_bytes
from tests.lessons.registry import Reason, Within, claim, reason

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


@claim("engine", "replays the accepted inputs from its committed state, moving {fixed} plus {per} "
       "per replayed position.")
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


@claim("engine", "a replay that skipped it would need {rec} a record ({pos} a replayed position "
       "over all layers).")
def without_q() -> dict[str, object]:
    """A replay's committed state does not depend on q (zeroed: the same bits), its outputs
    do; and the record without q is the engine's count less one q."""
    g = torch.Generator().manual_seed(0)
    drafts = DraftProjections.from_random(1, 5, 4, 32, 32, torch.float64, seed=0)
    s0 = torch.randn(1, 4, 32, 32, generator=g, dtype=torch.float64)
    no_q = DraftProjections(q=torch.zeros_like(drafts.q), k=drafts.k, v=drafts.v, g=drafts.g,
                            beta=drafts.beta)
    (st, out), (st0, out0) = verify_and_replay(s0, drafts, 3), verify_and_replay(s0, no_q, 3)
    assert torch.equal(st, st0) and not torch.equal(out, out0)
    d = load_model().dims
    _, per = _rollback_line()
    q = d.kda_heads * d.kda_head_dim * d.bytes_per_param  # one position's q, one layer
    assert per % d.n_kda == 0
    return {"rec": fmt_bytes(per // d.n_kda - q), "pos": fmt_bytes(per - d.n_kda * q)}


@claim("engine", "Whole bills per drafting pass at the defaults: replay holds each KDA layer's "
       "committed "
       "state and conv tail plus the window's raw inputs, {rep}; snapshots of every window "
       "position would hold {snap}: {x:.2f}×, under the {one} + γ ceiling.")
def whole_bills() -> dict[str, object]:
    d = load_model().dims
    r = _sweep().run(DEFAULTS["kind"], DEFAULTS["draft_len"])
    drafting = [p for p in r.passes if p.drafted]  # a one-position pass keeps no record
    assert all(p.held_bytes == p.snapshot_bytes == 0 for p in r.passes if not p.drafted)
    state_and_tail = d.n_kda * (_state_bytes() + d.kda_conv_bytes)
    for p in drafting:  # each pass's bills, whole: per position a state and its conv tail
        assert p.snapshot_bytes == p.window * state_and_tail
        assert p.snapshot_bytes / (p.held_bytes + state_and_tail) < p.window
    n = len(drafting)
    rep = sum(p.held_bytes for p in drafting) / n + state_and_tail
    snap = sum(p.snapshot_bytes for p in drafting) / n
    return {"rep": fmt_bytes(rep), "snap": fmt_bytes(snap), "x": snap / rep, "one": 1}


A_GAMMA = 1  # the code prompt's acceptance at gamma 1: the chance its first draft is accepted


def _a() -> float:
    return _sweep().run("code", A_GAMMA).acceptance


@claim("engine", "No: a wider pass reads more experts; modelled at a = {a:.2f}, gamma {best} "
       "reads least per byte written (Going further)")
def predict_answer() -> dict[str, object]:
    a = round(_a(), 2)
    return {"a": a, "best": verify_tax().best_gamma(a)}


@claim("engine", "If each draft is accepted with probability a, a pass writes (1 − a^(γ+{one})) / "
       "(1 − a) bytes on average, never more than {one} / (1 − a). With the code prompt's "
       "a = {a:.2f} that is {b1:.2f} at γ = {g1} and {b4:.2f} at γ = {g4}, at most {top:.2f}.")
def expected_per_pass() -> dict[str, object]:
    """The closed form against a direct sum over accepted counts: P(n) = a^n (1 - a) below
    gamma, a^gamma at gamma; a pass writes n + 1."""
    a = round(_a(), 2)
    for g in range(1, 9):
        direct = sum((n + 1) * a**n * (1 - a) for n in range(g)) + (g + 1) * a**g
        assert abs(direct - expected_bytes(a, g)) < 1e-12 and expected_bytes(a, g) < 1 / (1 - a)
    return {"one": 1, "a": a, "b1": expected_bytes(a, 1), "g1": 1, "b4": expected_bytes(a, 4),
            "g4": 4, "top": 1 / (1 - a)}


@reason("engine", "On the tiny model a pass at γ = {g} reads {cost:.0%} of plain decoding's weight "
        "bytes per byte written, because it reads them once for the window; read once per "
        "position, it would be {per_pos:.0%}.")
def speculation_pays() -> Reason:
    """Cause: one read of the weights per pass (once per position instead: above 100%). Rival:
    the text the verify tax is measured on (each half of the trace): within 1 point."""
    a, g, tax = round(_a(), 2), 4, verify_tax()
    return Reason(fields={"g": g, "cost": tax.cost(a, g),
                          "per_pos": tax.cost(a, g, per_position=True)},
                  effect=f"weight bytes per byte written at γ = {g}, a share of plain's",
                  base=tax.cost(a, g), cause="one read per pass (once per position instead)",
                  changed=tax.cost(a, g, per_position=True), expect="up", at_least=0.5,
                  rival="the text the verify tax is measured on (each half of the trace)",
                  rival_effects=[verify_tax(h).cost(a, g) for h in ("first", "second")],
                  within=Within(name="1 point", abs=0.01))


@reason("engine", "An [[MoE]] pass pays a **verify tax**: its positions pick different experts, so "
        "each layer reads {d1:.0f} experts for one position but {d5:.1f} for five.")
def verify_tax_numbers() -> Reason:
    """Effect: experts per layer a five-position pass reads. Cause: the positions' different
    picks (shared picks instead: top-k). Rival: the text measured (each half): within 0.2."""
    tax = verify_tax()
    assert tax.distinct[0] == load_model().dims.top_k and tax.distinct[4] > tax.distinct[0]
    shared = (tax.read(5, shared=True) - tax.trunk_bytes) / (tax.n_layers * tax.expert_bytes)
    return Reason(fields={"d1": tax.distinct[0], "d5": tax.distinct[4]},
                  effect="experts per layer a five-position pass reads", base=tax.distinct[4],
                  cause="the positions' different picks (all the same instead)", changed=shared,
                  expect="down", at_least=1.0, rival="the text measured (each half)",
                  rival_effects=[verify_tax(h).distinct[4] for h in ("first", "second")],
                  within=Within(name="0.2 experts", abs=0.2))


@reason("engine", "The tax sets the best window, γ = {best} here; without it the longest draft, "
        "γ = {free}, would win.")
def tax_sets_best_gamma() -> Reason:
    """Cause: the verify tax (every position picking the same experts instead): the best gamma
    moves to the longest. Rival: the text the tax is measured on: within one draft."""
    a, tax = round(_a(), 2), verify_tax()
    best, free = tax.best_gamma(a), tax.best_gamma(a, shared=True)
    return Reason(fields={"best": best, "free": free}, effect="the best draft length γ",
                  base=best, cause="the verify tax (the window's positions share experts)",
                  changed=free, expect="up", at_least=1,
                  rival="the text the tax is measured on (each half of the trace)",
                  rival_effects=[verify_tax(h).best_gamma(a) for h in ("first", "second")],
                  within=Within(name="one draft", abs=1))


@claim("engine", "The curve is flat near its best: γ = {lo} and {hi} read at most {more:.1%} "
       "more.")
def flat_near_best() -> dict[str, object]:
    """The modelled weight bytes per byte written at the best gamma's neighbours."""
    a, tax = round(_a(), 2), verify_tax()
    best = tax.best_gamma(a)
    lo, hi = best - 1, best + 1
    more = max(tax.cost(a, g) for g in (lo, hi)) / tax.cost(a, best) - 1
    assert 0 < more < 0.02
    return {"lo": lo, "hi": hi, "more": more}


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


@claim("engine", "A request's draft budget starts at gamma, grows by {up} after a fully accepted "
       "window (never past gamma) and shrinks by {down} after a rejection: gamma is a ceiling.")
def draft_budget() -> dict[str, object]:
    """The engine's own accept(): a request's budget after each kind of window."""
    class _Req:  # what accept reads and writes of a request
        def __init__(self, budget: int) -> None:
            self.budget, self.draft_len = budget, 8
    full, cut, top = _Req(3), _Req(3), _Req(7)
    accept(full, (0, 1, 2, 3), (1, 2, 3, 4), adaptive=True)  # every draft matched
    accept(cut, (0, 1, 2, 3), (1, 9, 9, 9), adaptive=True)  # the second draft rejected
    accept(top, (0, 1, 2), (1, 2, 3), adaptive=True)
    assert top.budget == top.draft_len  # never past gamma
    r = _sweep().run(DEFAULTS["kind"], DEFAULTS["draft_len"])
    assert r.drafted < r.gamma * len(r.passes)  # the ceiling is not always reached
    return {"up": full.budget - 3, "down": 3 - cut.budget}


@claim("engine", "a verify pass reads them once for all γ + {one} positions")
def one_read_per_pass() -> dict[str, object]:
    tax = verify_tax()
    assert tax.read(5) < 5 * tax.read(1)  # the trunk is read once for five positions
    return {"one": 1}
