"""Rollback cost explorer: closed forms vs brute-force enumeration of acceptance outcomes."""

from __future__ import annotations

import numpy as np
import pytest

from core.dims import K3
from core.errors import ParamError
from core.spec.rollback import (
    expected_accepted,
    replay_ledger,
    replay_outcome,
    snapshot_ledger,
    snapshot_outcome,
)
from core.spec.session import draw_accepted

STATE, RAW = 65_536 * 96, 1_026 * 96  # K3: one layer's fp32 state and one step's raw inputs


def test_hand_worked_ledgers():
    """gamma = 2, a = 1/2: P(n = 0, 1, 2) = 1/2, 1/4, 1/4, so E[n] = 3/4 and P(n > 0) = 1/2.

    snapshot: writes 2 copies always + a restore when n < 2 (P = 3/4) -> 2.75 S written,
              0.75 S read, holds S0 + 2 copies = 3 S.
    replay:   writes 2 raw records always + the new state when n > 0 (P = 1/2) -> 2 R + 0.5 S;
              reads S0 when n > 0 and E[n] = 0.75 records -> 0.5 S + 0.75 R; holds S + 2 R.
    """
    S, R = 1000, 10
    assert expected_accepted(2, 0.5) == 0.75
    s, r = snapshot_ledger(S, 2, 0.5), replay_ledger(S, R, 2, 0.5)
    assert (s.held, s.written, s.read) == (3000.0, 2750.0, 750.0)
    assert (r.held, r.written, r.read) == (1020.0, 520.0, 507.5)


@pytest.mark.parametrize("draft_len", [1, 3, 8])
@pytest.mark.parametrize("a", [0.0, 0.35, 0.9, 1.0])
def test_closed_forms_match_sampled_sessions(draft_len, a):
    """Expected ledgers equal the mean over 40,000 sampled verify steps (the session's sampler).

    The sampler draws per-token acceptance until the first rejection (core.spec.session); the
    closed forms are sums over a geometric law: two different computations of one expectation.
    """
    rng = np.random.default_rng(draft_len * 100 + round(a * 100))
    ns = [draw_accepted(rng, draft_len, a) for _ in range(40_000)]
    mean = {
        "snap": np.mean([snapshot_outcome(STATE, draft_len, n).moved for n in ns]),
        "replay": np.mean([replay_outcome(STATE, RAW, draft_len, n).moved for n in ns]),
        "n": np.mean(ns),
    }
    # 4 standard errors of a mean of 40,000 draws bounded by gamma * STATE: <= 2% of the scale
    assert snapshot_ledger(STATE, draft_len, a).moved == pytest.approx(mean["snap"], rel=0.02)
    assert replay_ledger(STATE, RAW, draft_len, a).moved == pytest.approx(
        mean["replay"], rel=0.02, abs=0.02 * STATE)
    assert expected_accepted(draft_len, a) == pytest.approx(mean["n"], abs=0.02 * draft_len)


def test_replay_never_holds_more_and_saves_at_most_one_plus_gamma():
    """Replay holds S + gamma R < (1 + gamma) S whenever R < S; the saving is below 1 + gamma."""
    for gamma in (1, 3, 8):
        s, r = snapshot_ledger(STATE, gamma, 0.7), replay_ledger(STATE, RAW, gamma, 0.7)
        assert r.held < s.held
        assert 1 < s.held / r.held < 1 + gamma


def test_outcomes_by_hand():
    """gamma = 4: n = 2 restores one state (snapshot) or reads S0 + 2 records (replay)."""
    s, r = snapshot_outcome(STATE, 4, 2), replay_outcome(STATE, RAW, 4, 2)
    assert (s.held, s.written, s.read) == (5 * STATE, 5 * STATE, STATE)
    assert (r.held, r.written, r.read) == (STATE + 4 * RAW, 4 * RAW + STATE, STATE + 2 * RAW)
    assert snapshot_outcome(STATE, 4, 4).read == 0 and replay_outcome(STATE, RAW, 4, 0).read == 0


def test_held_bytes_match_the_k3_reference():
    """Reference §5: K3, 69 KDA layers, gamma = 3: (1 + gamma) fp32 snapshots = 1,656 MiB."""
    mib = 1024**2
    assert snapshot_ledger(STATE, 3, 1.0).held * K3.n_kda / mib == pytest.approx(1656)
    assert replay_ledger(STATE, RAW, 3, 1.0).held == STATE + 3 * RAW


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: expected_accepted(0, 0.5), "draft_len"),
        (lambda: expected_accepted(3, 1.5), "accept_rate"),
        (lambda: snapshot_ledger(0, 3, 0.5), "state"),
        (lambda: replay_ledger(10, 0, 3, 0.5), "raw"),
        (lambda: snapshot_outcome(10, 3, 4), "accepted"),
        (lambda: replay_outcome(10, 5, 3, -1), "accepted"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ParamError, match=name):
        call()
