"""The whole bill of a verify step: closed forms vs brute-force enumeration of outcomes.

Pinned: a window is the bonus token plus gamma drafts, so n accepted drafts commit n + 1
positions and replay always reads the committed state; replay holds less but never by more
than 1 + gamma, and on a partial accept it reads more than a snapshot restore; the short-conv
window adds the same bytes to both schemes; K3's absolute numbers from reference §5.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.dims import K3, KDADims
from core.errors import ParamError
from core.speculative.cost import LayerBytes, layer_bytes
from core.speculative.rollback import (
    expected_accepted,
    held_saving,
    replay_ledger,
    replay_outcome,
    snapshot_ledger,
    snapshot_outcome,
)
from core.speculative.session import draw_accepted

K3_LAYER = layer_bytes(K3.kda)  # fp32 state 6 MiB, 96 x 1,026 B records, 96 x 768 B conv rows
MIB = 1024**2


def test_layer_bytes_by_hand():
    """K3: S = 96 x 128 x 128 x 4; record = 96 x (128 x 2 + 128 x 2 + 128 x 4 + 2) = 96 x 1,026;
    conv row = 96 x 3 x 128 x 2 (pre-conv q, k, v, bf16); history W - 1 = 3 rows (216 KiB)."""
    assert (K3_LAYER.state, K3_LAYER.raw) == (6 * MIB, 96 * 1_026)
    assert (K3_LAYER.conv_row, K3_LAYER.conv_history) == (73_728, 3)
    assert K3_LAYER.conv_history * K3_LAYER.conv_row == K3.kda_conv_bytes == 216 * 1024
    assert layer_bytes(KDADims(4, 32, 32), conv_size=1) == LayerBytes(16_384, 1_032)


def test_hand_worked_ledgers():
    """gamma = 2, a = 1/2, no conv: P(n = 0, 1, 2) = 1/2, 1/4, 1/4, E[n] = 3/4, window 3.

    snapshot: writes 3 states always + a restore when n < 2 (P = 3/4) -> 3.75 S written,
              0.75 S read, holds 3 S.
    replay:   writes 3 records + the new state always -> 3 R + S; reads S + (E[n] + 1) R
              = S + 1.75 R; holds S + 3 R; replays 1.75 positions.
    """
    b = LayerBytes(state=1000, raw=10)
    assert expected_accepted(2, 0.5) == 0.75
    s, r = snapshot_ledger(b, 2, 0.5), replay_ledger(b, 2, 0.5)
    assert (s.held, s.written, s.read, s.replayed) == (3000.0, 3750.0, 750.0, 0.0)
    assert (r.held, r.written, r.read, r.replayed) == (1030.0, 1030.0, 1017.5, 1.75)


def test_outcomes_by_hand_with_conv():
    """gamma = 4, n = 2, conv row C, history 3: both hold 3 + 5 = 8 conv rows and write 5."""
    b = LayerBytes(state=1000, raw=10, conv_row=7, conv_history=3)
    s, r = snapshot_outcome(b, 4, 2), replay_outcome(b, 4, 2)
    assert (s.held, s.written, s.read) == (5 * 1000 + 8 * 7, 5 * 1000 + 1000 + 5 * 7, 1000)
    assert (r.held, r.written, r.read) == (1000 + 5 * 10 + 8 * 7, 5 * 10 + 1000 + 5 * 7,
                                           1000 + 3 * 10)
    assert r.replayed == 3
    assert snapshot_outcome(b, 4, 4).read == 0  # all accepted: the last state is in place
    assert replay_outcome(b, 4, 0).read == 1000 + 10  # n = 0 still folds the bonus token


@pytest.mark.parametrize("draft_len", [1, 3, 8])
@pytest.mark.parametrize("a", [0.0, 0.35, 0.9, 1.0])
def test_closed_forms_match_sampled_outcomes(draft_len, a):
    """Expected ledgers equal the mean over 40,000 sampled verify steps (the session's sampler).

    The sampler draws per-token acceptance until the first rejection (core.speculative.session); the
    closed forms are sums over a geometric law: two different computations of one expectation.
    """
    rng = np.random.default_rng(draft_len * 100 + round(a * 100))
    ns = [draw_accepted(rng, draft_len, a) for _ in range(40_000)]
    for outcome, ledger in ((snapshot_outcome, snapshot_ledger),
                            (replay_outcome, replay_ledger)):
        sampled = [outcome(K3_LAYER, draft_len, n) for n in ns]
        want = ledger(K3_LAYER, draft_len, a)
        scale = (draft_len + 2) * K3_LAYER.state  # 4 standard errors stay below 2% of it
        for f in ("held", "written", "read", "replayed"):
            got = np.mean([getattr(x, f) for x in sampled])
            assert getattr(want, f) == pytest.approx(got, abs=0.02 * scale), (outcome, f)
    assert expected_accepted(draft_len, a) == pytest.approx(np.mean(ns), abs=0.02 * draft_len)


@pytest.mark.parametrize("b", [K3_LAYER, K3_LAYER.without_conv(), LayerBytes(100, 99)])
def test_saving_never_reaches_one_plus_gamma(b):
    """(1 + gamma) S + C over S + (gamma + 1) R + C is below 1 + gamma for any R > 0, C >= 0;
    with a record nearly as big as a state, replay even holds more."""
    for gamma in range(1, 17):
        assert held_saving(b, gamma) < 1 + gamma
        assert (held_saving(b, gamma) > 1) == (b.raw * (gamma + 1) < b.state * gamma)


def test_partial_accept_reads_more_than_a_restore():
    """Replay reads S + (n + 1) R; a snapshot restore reads S: replay reads more if n < gamma."""
    for n in range(4):
        assert replay_outcome(K3_LAYER, 4, n).read > snapshot_outcome(K3_LAYER, 4, n).read > 0


def test_held_bytes_match_the_k3_reference():
    """Reference §5: K3, 69 KDA layers, gamma = 3: (1 + gamma) fp32 snapshots = 1,656 MiB."""
    bare = K3_LAYER.without_conv()
    assert snapshot_ledger(bare, 3, 1.0).held * K3.n_kda / MIB == pytest.approx(1656)
    assert replay_ledger(bare, 3, 1.0).held == bare.state + 4 * bare.raw
    conv = K3.n_kda * (3 + 4) * K3_LAYER.conv_row  # the same in both schemes
    assert snapshot_ledger(K3_LAYER, 3, 0.5).held * K3.n_kda == \
        snapshot_ledger(bare, 3, 0.5).held * K3.n_kda + conv


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: expected_accepted(0, 0.5), "draft_len"),
        (lambda: expected_accepted(3, 1.5), "accept_rate"),
        (lambda: snapshot_ledger(K3_LAYER, 0, 0.5), "draft_len"),
        (lambda: replay_ledger(K3_LAYER, 3, -0.5), "accept_rate"),
        (lambda: snapshot_outcome(K3_LAYER, 3, 4), "accepted"),
        (lambda: replay_outcome(K3_LAYER, 3, -1), "accepted"),
        (lambda: replay_outcome(1000, 3, 1), "bytes"),
        (lambda: LayerBytes(0, 1), "state"),
        (lambda: LayerBytes(10, 1, conv_row=5), "conv_row"),
        (lambda: layer_bytes(KDADims(1, 8, 8), conv_size=-1), "conv_size"),
        (lambda: layer_bytes((1, 8, 8)), "dims"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ParamError, match=name):
        call()
