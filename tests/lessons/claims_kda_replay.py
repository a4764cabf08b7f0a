"""Claims of assets/lessons/kda_replay.md, each computed from core.speculative, checked by its
reason.

Byte counts come from core.speculative.cost / core.speculative.rollback and are re-derived here
from the dimensions (core.dims.K3) by hand, so a change to either side fails. The tab's
convention: fp32 state and gate, bf16 k, v, beta and conv rows, q not stored.
"""

from __future__ import annotations

import functools
import math

import torch

from core.dims import K3, KDADims
from core.model.config import ModelDims
from core.speculative import (
    LayerBytes,
    held_saving,
    layer_bytes,
    replay_outcome,
    rollback_bytes,
    snapshot_outcome,
    window,
)
from core.speculative.drafts import DraftProjections, verify_and_replay
from core.speculative.oracles import check_conv, check_replay, committed_state
from core.tolerances import CHUNKED_MAX_ABS, max_abs
from tabs.kda_replay import TAB
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "kda_replay"
MIB = 1024**2
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


@functools.cache
def k3() -> LayerBytes:
    return layer_bytes(K3.kda)


@functools.cache
def defaults() -> dict[str, object]:
    return TAB.defaults()


@functools.cache
def replay_at_defaults():
    d = defaults()
    return check_replay(d["draft_len"], d["accepted"], d["heads"], d["dk"], d["dv"], d["dtype"])


def by_hand_k3() -> tuple[int, int, int]:
    """(state, record, conv row) of one K3 KDA layer, from the dimensions alone."""
    H, dk, dv = K3.kda_heads, K3.kda_head_dim, K3.kda_head_dim
    state = H * dk * dv * 4  # fp32
    record = H * (dk * 2 + dv * 2 + dk * 4 + 2)  # bf16 k, v; fp32 g; bf16 beta
    conv_row = H * (dk + dk + dv) * 2  # bf16 pre-conv q | k | v
    return state, record, conv_row


@claim(LESSON, "in one window of γ + {bonus} positions")
def window_positions() -> dict[str, object]:
    """The window is the pending bonus token plus the drafts; with none accepted the replay
    still folds exactly one position, and that equals the recurrence over it."""
    bonus = {window(g) - g for g in range(1, 17)}
    assert len(bonus) == 1
    zero = replay_at_defaults().cases[0]
    assert zero.n == 0 and zero.replay_outputs.shape[1] == 1
    assert torch.equal(zero.replay_outputs, zero.reference_outputs)
    return {"bonus": bonus.pop()}


@claim(LESSON, "n + {bonus} positions commit")
def committed_positions() -> dict[str, object]:
    bonus = {replay_outcome(k3(), g, n).replayed - n for g in range(1, 9) for n in range(g + 1)}
    assert bonus == {1.0}
    for case in replay_at_defaults().cases:
        assert case.replay_outputs.shape[1] == case.n + 1
        assert torch.equal(case.replay_state, case.reference_state)
    return {"bonus": int(bonus.pop())}


@claim(LESSON, "Per position a [[K3]] state is {ratio:.1f}× larger than its raw inputs")
def per_position_ratio() -> dict[str, object]:
    state, record, _ = by_hand_k3()
    b = k3()
    assert (b.state, b.raw) == (state, record)
    assert rollback_bytes(1, 128, 128, 7).ratio == state / record  # independent of H and γ
    return {"ratio": state / record}


@claim(LESSON, "γ = {g} snapshots hold {snap:,.0f} MiB and replay {rep:,.0f} MiB: {x:.1f}×")
def whole_bill_k3() -> dict[str, object]:
    """Every KDA layer, committed state and conv window included."""
    g, (S, R, C) = 3, by_hand_k3()
    conv = (K3.conv_size - 1 + g + 1) * C  # history plus one row per window position
    snap = K3.n_kda * ((1 + g) * S + conv)
    rep = K3.n_kda * (S + (g + 1) * R + conv)
    assert snapshot_outcome(k3(), g, g).held * K3.n_kda == snap
    assert replay_outcome(k3(), g, 0).held * K3.n_kda == rep
    assert snap / rep < 1 + g < S / R  # far below the per-position ratio
    return {"g": g, "snap": snap / MIB, "rep": rep / MIB, "x": snap / rep}


@reason(LESSON, "Because replay keeps one whole state, no state size can lift the saving past "
               "{one} + γ.")
def saving_ceiling() -> Reason:
    """(1 + γ) S + C over S + (γ + 1) R + C: the limit as S / R grows is 1 + γ, never reached.
    Effect: the saving at γ = 3 with a state 10^15 times a record. Cause: replay's one state
    (drop it from replay's bill: the saving grows with S / R). Rival: the conv window (K3's
    conv rows, or none): the limit stays 1 + γ."""
    for g in range(1, 17):
        for b in (k3(), k3().without_conv(), LayerBytes(10**15, 1)):
            assert held_saving(b, g) < 1 + g
        assert math.isclose(held_saving(LayerBytes(10**15, 1), g), 1 + g, rel_tol=1e-9)
    g, huge = 3, LayerBytes(10**15, 1)
    S, R = huge.state, huge.raw
    snap, rep = snapshot_outcome(huge, g, g).held, replay_outcome(huge, g, 0).held
    assert rep - S == (g + 1) * R  # replay's bill without its one state
    with_conv = LayerBytes(10**15, 1, k3().conv_row, k3().conv_history)
    return Reason(fields={"one": round(held_saving(huge, g)) - g},
                  effect=f"memory saving at γ = {g}, a state 10^15 records", base=snap / rep,
                  cause="replay's one committed state (left out)", changed=snap / (rep - S),
                  expect="up", at_least=100 * (1 + g),
                  rival="the conv window (K3's rows, or none)",
                  rival_effects=(held_saving(with_conv, g), held_saving(huge, g)),
                  within=Within(name="1e-9 of itself", rel=1e-9))


@claim(LESSON, "Snapshots hold {one} + γ states; replay holds one, the committed state, plus {one} "
               "+ γ records")
def what_each_holds() -> dict[str, object]:
    """The ledger's bills, read as states and records: snapshots (1 + γ) S, replay S + (1 + γ)
    R, the conv window the same in both."""
    b = k3()
    bare = b.without_conv()
    for g in range(1, 17):
        assert snapshot_outcome(bare, g, g).held == (1 + g) * b.state
        assert replay_outcome(bare, g, 0).held == b.state + (1 + g) * b.raw
        assert (snapshot_outcome(b, g, g).held - snapshot_outcome(bare, g, g).held
                == replay_outcome(b, g, 0).held - replay_outcome(bare, g, 0).held)
    return {"one": 1}


@claim(LESSON, "On a partial accept replay also reads more")
def partial_accept_reads_more() -> dict[str, object]:
    d = defaults()
    toy = layer_bytes(KDADims(d["heads"], d["dk"], d["dv"]))
    for b in (k3(), toy):
        for g in range(1, 17):
            for n in range(g):
                assert replay_outcome(b, g, n).read == b.state + (n + 1) * b.raw
                assert replay_outcome(b, g, n).read > snapshot_outcome(b, g, n).read == b.state
    return {}


@claim(LESSON, "remembers its last {history} inputs")
def conv_history() -> dict[str, object]:
    """K3 and the tiny model share conv width 4; a rejected row leaks when the cut is skipped."""
    assert K3.conv_size == ModelDims().conv_size
    c = check_conv(4, 2)
    assert torch.equal(c.cut_history, c.committed_history)
    assert torch.equal(c.next_cut, c.next_committed)
    assert not torch.equal(c.next_uncut, c.next_committed)
    assert k3().conv_history == K3.conv_size - 1
    return {"history": K3.conv_size - 1}


@claim(LESSON, "a state of {state:,} B against a record of {record:,} B")
def per_head_bytes() -> dict[str, object]:
    state, record, _ = by_hand_k3()
    return {"state": state // K3.kda_heads, "record": record // K3.kda_heads}


@claim(LESSON, "Counting the conv row ({row:,} B per head, the same in both schemes), K3's "
               "per-position ratio drops to {ratio:.1f}×")
def per_position_with_conv() -> dict[str, object]:
    S, R, C = by_hand_k3()
    b = k3()
    for n in range(4):  # the conv window adds the same bytes to both schemes
        with_conv = snapshot_outcome(b, 3, n).held - replay_outcome(b, 3, n).held
        bare = snapshot_outcome(b.without_conv(), 3, n).held - \
            replay_outcome(b.without_conv(), 3, n).held
        assert with_conv == bare
    assert b.per_position_ratio == (S + C) / (R + C) < S / R
    return {"row": C // K3.kda_heads, "ratio": b.per_position_ratio}


def _one_dtype(d: int, q: bool, H: int = 16) -> float:
    ones = {f: 1 for f in ("state_bytes", "k_bytes", "v_bytes", "g_bytes", "beta_bytes",
                           "q_bytes")}
    return rollback_bytes(H, d, d, 4, include_q=q, **ones).ratio


@claim(LESSON, "At d_k = d_v = {d} with one dtype and q counted, the ratio is {num:,} / {den_q} "
               "= {r_q:.2f}×; without q it is {num:,} / {den} = {r:.2f}×; with the dtypes above "
               "it is {r_k3:.2f}×")
def other_conventions() -> dict[str, object]:
    d = 32
    num, den_q, den = d * d, 4 * d + 1, 3 * d + 1  # q, k, v, g (+ beta) at one byte each
    assert _one_dtype(d, True) == num / den_q == _one_dtype(d, True, H=1)
    assert _one_dtype(d, False) == num / den
    r_k3 = rollback_bytes(16, d, d, 4).ratio
    assert r_k3 == layer_bytes(KDADims(4, d, d)).state / layer_bytes(KDADims(4, d, d)).raw
    return {"d": d, "num": num, "den_q": den_q, "r_q": num / den_q, "den": den,
            "r": num / den, "r_k3": r_k3}


COMMON_SLIP = 4.0  # a ratio often quoted for d_k = d_v = 32 (not ours)


@claim(LESSON, "quotes {claimed:.1f}× for that geometry: its own convention gives {r:.2f}×, and "
               "{claimed:.1f}× is what d_k = d_v = {d} gives ({r_d:.2f}×)")
def common_slip() -> dict[str, object]:
    """4.0 is not the one-dtype ratio at 32; among powers of two, 16 is the width nearest it."""
    widths = [2**i for i in range(3, 9)]
    nearest = min(widths, key=lambda w: abs(_one_dtype(w, True) - COMMON_SLIP))
    assert abs(_one_dtype(32, True) - COMMON_SLIP) > 1
    return {"claimed": COMMON_SLIP, "r": _one_dtype(32, True), "d": nearest,
            "r_d": _one_dtype(nearest, True)}


@claim(LESSON, "(principle figure at its defaults, γ = {g}, n = {n}, one toy layer of H = {H}, "
               "{dk} × {dv}): snapshots hold {snap_held:,} B and replay {rep_held:,} B; a "
               "snapshot restore reads {snap_read:,} B, replay reads {rep_read:,} B (the "
               "committed state and {records} records)")
def principle_bill() -> dict[str, object]:
    d = defaults()
    g, n, H, dk, dv = d["draft_len"], d["accepted"], d["heads"], d["dk"], d["dv"]
    S, C = H * dk * dv * 4, H * (2 * dk + dv) * 2
    R = H * (dk * 2 + dv * 2 + dk * 4 + 2)
    conv = (K3.conv_size - 1 + g + 1) * C
    b = layer_bytes(KDADims(H, dk, dv))
    snap, rep = snapshot_outcome(b, g, n), replay_outcome(b, g, n)
    assert (snap.held, rep.held) == ((g + 1) * S + conv, S + (g + 1) * R + conv)
    assert (snap.read, rep.read) == (S, S + (n + 1) * R)
    return {"g": g, "n": n, "H": H, "dk": dk, "dv": dv, "snap_held": int(snap.held),
            "rep_held": int(rep.held), "snap_read": int(snap.read), "rep_read": int(rep.read),
            "records": WORDS[n + 1]}


@reason(LESSON, "over the committed tokens gives max|Δ| = {d:g} because both run the same step "
               "function;")
def replay_is_exact() -> Reason:
    """Replay vs the recurrence over the committed tokens, compared here; and a replay here
    leaves the committed state it started from as it was. Cause: the same step function (the
    chunked form instead: it moves). Rival: how many drafts were accepted (each n): exactly 0."""
    cases = replay_at_defaults().cases
    worst = max(max(max_abs(c.replay_outputs, c.reference_outputs),
                    max_abs(c.replay_state, c.reference_state)) for c in cases)
    d = defaults()
    s0 = committed_state(d["heads"], d["dk"], d["dv"], getattr(torch, d["dtype"]))
    before = s0.clone()
    drafts = DraftProjections.from_random(1, d["draft_len"] + 1, d["heads"], d["dk"], d["dv"],
                                          s0.dtype)
    for n in range(d["draft_len"] + 1):
        verify_and_replay(s0, drafts, n + 1)
        assert torch.equal(s0, before), n
    per_n = [max(max_abs(c.replay_outputs, c.reference_outputs),
                 max_abs(c.replay_state, c.reference_state)) for c in cases]
    chunked = max(c.max_abs_chunked for c in cases)
    return Reason(fields={"d": worst}, effect="max |replay - recurrence|", base=worst,
                  cause="the same step function (the chunked form instead)", changed=chunked,
                  expect="up", rival="the drafts accepted (every n)", rival_effects=per_n,
                  within=Within(name="exactly"))


@claim(LESSON, "(within {tol:.0e} in float64)")
def chunked_tolerance() -> dict[str, object]:
    """The chunked form is a different kernel: close, but not bit for bit."""
    tol = CHUNKED_MAX_ABS["float64"]
    cases = replay_at_defaults().cases
    assert replay_at_defaults().dtype == "float64"
    assert all(c.max_abs_chunked <= tol for c in cases)
    assert any(c.max_abs_chunked > 0 for c in cases)
    return {"tol": tol}


@claim(LESSON, "(conv width {w})")
def conv_width() -> dict[str, object]:
    d = defaults()
    c = check_conv(d["draft_len"], d["accepted"])
    assert c.conv_size == ModelDims().conv_size
    return {"w": c.conv_size}


@claim(LESSON, "the uncut history moves the next output by {off:.2f} at the defaults (its largest "
               "entry is {mx:.2f})")
def conv_uncut() -> dict[str, object]:
    d = defaults()
    c = check_conv(d["draft_len"], d["accepted"])
    assert d["accepted"] < d["draft_len"]
    assert torch.equal(c.cut_history, c.committed_history)
    assert torch.equal(c.next_cut, c.next_committed)
    off = (c.next_uncut - c.next_committed).abs().max().item()
    assert off > 0
    return {"off": off, "mx": c.next_committed.abs().max().item()}


@claim(LESSON, "No: at γ = {g} it is {x:.1f}×, under {one} + γ = {ceil}, far from {ratio:.1f}×.")
def predict_answer() -> dict[str, object]:
    g = int(TAB.hero.demo)
    x = held_saving(k3(), g)
    state, record, _ = by_hand_k3()
    assert TAB.hero.name == "draft_len" and x < 1 + g < state / record
    assert held_saving(k3(), g) > held_saving(k3(), int(TAB.hero.value))  # it grows with γ
    return {"g": g, "x": x, "one": 1, "ceil": 1 + g, "ratio": state / record}
