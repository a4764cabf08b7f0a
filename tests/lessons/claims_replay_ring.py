"""Claims of assets/lessons/replay_ring.md, each computed from core.speculative, checked by its
reason.

Sessions run at the tab's own defaults (tabs.replay_ring.TAB); ledgers are re-derived from the
per-layer bytes by hand; the gate bound is checked against torch's fp32 exp.
"""

from __future__ import annotations

import functools
import itertools
import math

import torch

from core.dims import K3
from core.kda import kda_chunked, kda_recurrent
from core.kda.chunked import SUB_CHUNK
from core.model.config import ModelDims
from core.speculative import window
from core.speculative.bounds import (
    GATE_EXPONENT_LIMIT,
    K3_GATE_LOWER_BOUND,
    max_ring_for_gate,
    needs_flush,
    ring_schedule,
)
from core.speculative.ring import SnapshotRing
from core.speculative.session import SessionParams, accepted_draws, run_session
from core.tolerances import max_abs
from tabs.replay_ring import TAB
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "replay_ring"


@functools.cache
def params(dtype: str = "float64", **override: object) -> SessionParams:
    d = {k: v for k, v in TAB.defaults().items() if k not in ("dtype", "step")}
    return SessionParams(**{**d, "dtype": dtype, **override})


@functools.cache
def session(dtype: str = "float64"):
    return run_session(params(dtype))


def _overruns(rule, capacity: int, draft_len: int, draws) -> bool:
    """Would a window ever be pushed past the ring's end under `rule`?"""
    c = 0
    for n in draws:
        if rule(c):
            c = 0
        if c + draft_len + 1 > capacity:
            return True
        c += n + 1
    return False


@claim(LESSON, "(committed + γ + {bonus} > L)")
def flush_rule() -> dict[str, object]:
    """The rule leaves room for the whole window; the rule without the bonus token does not."""
    g = 3
    for L in range(g + 1, 33):
        for c in range(L + 1):
            assert needs_flush(c, g, L) == (c + g + 1 > L)
    draws = [g, g, 0] * 10
    assert not _overruns(lambda c: needs_flush(c, g, 12), 12, g, draws)
    assert _overruns(lambda c: c + g > 12, 12, g, draws)
    return {"bonus": window(g) - g}


@claim(LESSON, "a window of γ + {bonus} entries")
def window_entries() -> dict[str, object]:
    s = session()
    pushes = {r.snap_pushes - s.params.draft_len for r in s.steps}
    assert len(pushes) == 1 and s.layout.num_tentative == s.params.draft_len + 1
    return {"bonus": pushes.pop()}


@reason(LESSON, "A step that rejects every draft still commits one token, so the ring always "
               "moves forward.")
def progress_without_accepts() -> Reason:
    """Every draft rejected (a = 0). Cause: the bonus token (count only accepted drafts: no
    progress). Rival: the ring's length (4, 32): one token a step all the same."""
    def per_step(**override: object) -> float:
        s = run_session(params(accept_rate=0.0, **override))
        assert all(r.n_accepted == 0 for r in s.steps)
        return s.num_committed / len(s.steps)
    s = run_session(params(accept_rate=0.0))
    return Reason(effect="tokens committed per step, every draft rejected", base=per_step(),
                  cause="the bonus token (only accepted drafts commit)",
                  changed=sum(r.n_accepted for r in s.steps) / len(s.steps), expect="down",
                  at_least=1.0, rival="the ring's length (L = 4, 32)",
                  rival_effects=(per_step(capacity=4), per_step(capacity=32)),
                  within=Within(name="exactly"))


def _totals(s) -> dict[str, int]:
    fields = ("raw_written", "raw_read", "snap_written", "snap_read")
    return {f: sum(getattr(r.k3, f) for r in s.steps) for f in fields}


@claim(LESSON, "At the defaults a ring of snapshots writes {w:.1f}× and reads {r:.1f}× the bytes "
               "the raw-input ring does")
def bandwidth_at_defaults() -> dict[str, object]:
    """Totals re-derived by hand from one K3 layer's bytes x 69 layers."""
    s, u = session(), session().k3_units
    w = s.params.draft_len + 1
    want = {"raw_written": 0, "raw_read": 0, "snap_written": 0, "snap_read": 0}
    for r in s.steps:
        c = r.flushed or r.committed_before  # entries folded by the flush, or replayed
        want["raw_written"] += w * (u.raw + u.conv_row) + (u.state if r.flushed else 0)
        want["raw_read"] += c * u.raw
        restore = u.state if r.n_accepted < s.params.draft_len else 0
        want["snap_written"] += w * (u.state + u.conv_row) + restore
        want["snap_read"] += restore
    got = _totals(s)
    assert got == {k: v * K3.n_kda for k, v in want.items()}
    w_ratio, r_ratio = got["snap_written"] / got["raw_written"], got["snap_read"] / got["raw_read"]
    assert w_ratio > 1
    return {"w": w_ratio, "r": r_ratio}


def first_overflow(split: bool, d: int = 32, longest: int = 64, seed: int = 0) -> int:
    """The shortest ring whose parallel replay in fp32 produces a non-finite output, with every
    gate at K3's floor (longest + 1: none). split: each decay exp(G_i - G_j) is formed as
    exp(G_i) * exp(-G_j) (the factor applied to k_j first); else as one difference."""
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.nn.functional.normalize(torch.randn(longest, d, generator=g), dim=-1)
            for _ in range(2))  # [T, d] unit keys and queries, as KDA's
    v = torch.randn(longest, d, generator=g)  # [T, d]
    G = K3_GATE_LOWER_BOUND * torch.arange(longest, dtype=torch.float32)  # [T] summed gates
    if split:
        kk = torch.exp(-G)[:, None] * k  # [T, d]: exp(-G_j) k_j
        scores = torch.exp(G)[:, None] * (q @ kk.T)  # [T, T]
    else:
        scores = torch.exp(G[:, None] - G[None, :]).tril() * (q @ k.T)
    out = scores.tril() @ v  # [T, d]: row i is position i's output
    bad = (~torch.isfinite(out)).any(-1).nonzero()
    return int(bad[0]) + 1 if len(bad) else longest + 1


@reason(LESSON, "Two things cap L: replay work, and a parallel replay kernel that computes each "
               "decay exp(G_i − G_j) as exp(G_i) · exp(−G_j). Its gates, summed over L − {one} "
               "steps at [[K3]]'s floor of {lb}, overflow fp32 from L = {over}; a safety bound of "
               "{lim:g} stops it at L = {L}.")
def gate_range() -> Reason:
    """Cause: splitting each decay into two factors (formed as one difference: no overflow up
    to 64). Rival: the head size (d_k 16, 128 instead of 32): the same first overflow."""
    L, lb = max_ring_for_gate(), K3_GATE_LOWER_BOUND
    assert ModelDims().gate_lower_bound == lb  # the model uses K3's lower-bound gate
    assert (L - 1) * -lb <= GATE_EXPONENT_LIMIT < L * -lb
    over = first_overflow(True)
    f32 = torch.float32
    assert torch.isfinite(torch.exp(torch.tensor((over - 2) * -lb, dtype=f32)))
    assert torch.isinf(torch.exp(torch.tensor((over - 1) * -lb, dtype=f32)))
    return Reason(fields={"one": 1, "lb": f"−{-lb:g}", "over": over, "lim": GATE_EXPONENT_LIMIT,
                          "L": L},
                  effect="the shortest ring whose parallel fp32 replay overflows", base=over,
                  cause="splitting each decay in two factors (one difference instead)",
                  changed=first_overflow(False), expect="up", at_least=64 - over,
                  rival="the head size (d_k 16, 128)",
                  rival_effects=(first_overflow(True, 16), first_overflow(True, 128)),
                  within=Within(name="exactly"))


@reason(LESSON, "max|Δ| = {d:g} in float64 and in float32, because both run the same step in the "
               "same order.")
def equivalence_exact() -> Reason:
    """The streamed outputs and final state, and the snapshot restored at every step, against
    one kda_recurrent over the committed tokens (to each step's end), compared here. Cause: the
    same step in the same order (the chunked form sums in another order: it moves). Rival: the
    dtype (float64, float32): exactly 0 in both."""
    worst, per_dtype = 0.0, []
    for dtype in ("float64", "float32"):
        s = session(dtype)
        c = s.committed
        o_ref, s_ref = kda_recurrent(c.q, c.k, c.v, c.g, c.beta, initial_state=s.initial_state)
        assert torch.equal(s.outputs, o_ref) and torch.equal(s.final_state, s_ref)
        ends = itertools.accumulate(r.n_committed for r in s.steps)
        restored = [kda_recurrent(c.q[:, :t], c.k[:, :t], c.v[:, :t], c.g[:, :t],
                                  c.beta[:, :t], initial_state=s.initial_state)[1] for t in ends]
        assert len(s.snap_restored) == len(s.steps)
        assert all(torch.equal(a, b) for a, b in zip(s.snap_restored, restored, strict=True))
        worst = max(worst, max_abs(s.outputs, o_ref), max_abs(s.final_state, s_ref))
        per_dtype.append(max(max_abs(s.outputs, o_ref), max_abs(s.final_state, s_ref)))
    s = session("float32")
    c = s.committed
    o_ch, s_ch = kda_chunked(c.q, c.k, c.v, c.g, c.beta, initial_state=s.initial_state)
    other_order = max(max_abs(s.outputs, o_ch), max_abs(s.final_state, s_ch))
    return Reason(fields={"d": worst}, effect="max |streamed - one recurrence|", base=worst,
                  cause="the same step in the same order (the chunked form's order)",
                  changed=other_order, expect="up", rival="the dtype (float64, float32)",
                  rival_effects=per_dtype, within=Within(name="exactly"))


@claim(LESSON, "(L = {L}, γ = {g}, a = {a}, {steps} steps): {tokens} tokens committed, "
               "{flushes} flushes")
def defaults_summary() -> dict[str, object]:
    s, p = session(), params()
    assert s.num_committed == sum(r.n_accepted + 1 for r in s.steps)
    sched = ring_schedule(p.capacity, p.draft_len, accepted_draws(p))
    assert sched.tokens == s.num_committed
    return {"L": p.capacity, "g": p.draft_len, "a": p.accept_rate, "steps": p.steps,
            "tokens": s.num_committed, "flushes": sum(1 for r in s.steps if r.flushed)}


@claim(LESSON, "At L = {L} the ring replays {x:.2f} entries per committed token; at L = {small} "
               "it folds each entry once, in a flush before every step after the first")
def sweep() -> dict[str, object]:
    p = params()
    draws = accepted_draws(p)
    at = ring_schedule(p.capacity, p.draft_len, draws)
    small = p.draft_len + 1
    tiny = ring_schedule(small, p.draft_len, draws)
    assert [bool(f) for f in tiny.flushed] == [False] + [True] * (p.steps - 1)
    assert sum(tiny.committed_before) == 0  # nothing left to replay between flushes
    assert sum(tiny.replayed) == tiny.tokens - (draws[-1] + 1)  # all but the last window
    assert at.replayed_per_token > tiny.replayed_per_token
    return {"L": p.capacity, "x": at.replayed_per_token, "small": small}


@claim(LESSON, "history + {b} + speculative tokens > L (#49847); the {b} is the bonus token")
def vllm_rule() -> dict[str, object]:
    s = session()
    for r in s.steps:  # history + 1 + gamma entries always fit after the flush
        assert r.committed_before + 1 + s.params.draft_len <= s.params.capacity
    return {"b": window(s.params.draft_len) - s.params.draft_len}


@claim(LESSON, "fp32 exp overflows just above {ln:.1f}: a split kernel's largest factor, "
               "exp((L − {one})·|lb|), is finite up to L = {L} at |lb| = {lb:g}; the bound "
               "(L − {one})·|lb| ≤ {lim:g} leaves a margin")
def fp32_range() -> dict[str, object]:
    f32 = torch.float32
    ln = math.log(torch.finfo(f32).max)
    assert torch.isfinite(torch.exp(torch.tensor(ln - 0.01, dtype=f32)))
    assert torch.isinf(torch.exp(torch.tensor(ln + 0.01, dtype=f32)))
    assert GATE_EXPONENT_LIMIT < ln
    lb = -K3_GATE_LOWER_BOUND
    L = math.floor(ln / lb) + 1
    assert torch.isfinite(torch.exp(torch.tensor((L - 1) * lb, dtype=f32)))
    assert torch.isinf(torch.exp(torch.tensor(L * lb, dtype=f32)))
    return {"ln": ln, "one": 1, "L": L, "lb": lb, "lim": GATE_EXPONENT_LIMIT}


@claim(LESSON, "A kernel that subtracts first, exp(G_i − G_j) with i ≥ j, only ever exponentiates "
               "numbers ≤ {zero} and never overflows.")
def subtract_first() -> dict[str, object]:
    assert first_overflow(False) > 64
    return {"zero": 0}


@claim(LESSON, "splits its decays within sub-chunks of {s} tokens for the same reason: ({s} − "
               "{one}) × {lb:g} = {p:g} stays inside the bound")
def chunked_anchor() -> dict[str, object]:
    p = (SUB_CHUNK - 1) * -K3_GATE_LOWER_BOUND
    assert p <= GATE_EXPONENT_LIMIT and SUB_CHUNK <= max_ring_for_gate()
    return {"s": SUB_CHUNK, "one": 1, "lb": -K3_GATE_LOWER_BOUND, "p": p}


def _wrong_restores(capacity: int, pop_stale: bool) -> int:
    """Steps whose restored snapshot is not that step's (n + 1)-th state: the session's pushes
    and accepted counts on a SnapshotRing of labels. pop_stale: pop the last step's rejected
    snapshots first (the session's rule); else pop only this step's n + 1."""
    p = params()
    w, ring, wrong = p.draft_len + 1, SnapshotRing(capacity), 0
    for step, n in enumerate(accepted_draws(p)):
        for t in range(w):
            ring.push(torch.tensor([step, t]))
        pops = len(ring) - w + n + 1 if pop_stale else n + 1
        for _ in range(pops):
            restored = ring.pop()
        wrong += restored.tolist() != [step, n]
    return wrong


@reason(LESSON, "its pop returns the oldest, so rejected snapshots must be popped before the next "
               "restore, and a push into a full ring overwrites the oldest.")
def snapshot_pops() -> Reason:
    """Cause: popping the rejected snapshots (skip it: restores go wrong). Rival: the ring's
    length (L = 32): every restore right all the same."""
    p = params()
    assert sum(n < p.draft_len for n in accepted_draws(p)) > 0  # some snapshots are rejected
    return Reason(effect="steps restoring the wrong snapshot",
                  base=_wrong_restores(p.capacity, True),
                  cause="popping the rejected snapshots first (skipped)",
                  changed=_wrong_restores(p.capacity, False), expect="up",
                  rival="the ring's length (L = 32)", rival_effects=(_wrong_restores(32, True),),
                  within=Within(name="exactly"))


@claim(LESSON, "**Predict, then move L to {L1}:** more flushes? More bytes written?")
def predict_small_ring() -> dict[str, object]:
    h = TAB.hero
    assert h.name == "capacity" and h.demo < h.value
    return {"L1": int(h.demo)}


@claim(LESSON, "Yes to both: it flushes before {f1} of the {steps} steps ({f0} at L = {L0}) and "
               "writes {w:.2f}× the bytes, a whole state per flush. It reads less ({r:.2f}×).")
def predict_answer() -> dict[str, object]:
    p, h = params(), TAB.hero
    small, big = run_session(params(capacity=int(h.demo))), session()
    flushes = [sum(1 for r in x.steps if r.flushed) for x in (small, big)]
    ts, tb = _totals(small), _totals(big)
    assert flushes[0] > flushes[1] and ts["raw_written"] > tb["raw_written"]
    assert ts["raw_read"] < tb["raw_read"]
    return {"f1": flushes[0], "steps": p.steps, "f0": flushes[1], "L0": p.capacity,
            "w": ts["raw_written"] / tb["raw_written"], "r": ts["raw_read"] / tb["raw_read"]}


@claim(LESSON, "The step slider replays the timeline one verify step at a time.")
def step_slider() -> dict[str, object]:
    """The step slider follows the steps slider; the layout at step k is the ring the run
    recorded after step k's pushes, and its default shows every step."""
    c = TAB.control("step")
    assert c.max_from == "steps" and c.value == TAB.control("steps").value
    assert {f.name for f in TAB.figures if "step" in f.params} == {"ring_timeline", "ring_layout"}
    s = session()
    assert len(s.layouts) == len(s.steps) and s.layouts[-1] == s.layout
    assert all(lay.start == r.start for lay, r in zip(s.layouts, s.steps, strict=True))
    return {}
