"""Rollback cost explorer: closed forms vs brute-force enumeration of acceptance outcomes."""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.rollback import (
    expected_accepted,
    replay_ledger,
    replay_outcome,
    snapshot_ledger,
    snapshot_outcome,
)

STATE, RAW = 65_536 * 96, 1_026 * 96  # K3: one layer's fp32 state and one step's raw inputs


def _outcomes(draft_len: int, a: float):
    """(n, P(n)) for per-token acceptance a, stopping at the first rejection."""
    for n in range(draft_len):
        yield n, a**n * (1 - a)
    yield draft_len, a**draft_len


def _brute(draft_len: int, a: float) -> tuple[float, float, float, float]:
    """Expected (snapshot written, snapshot read, replay written, replay read) by enumeration."""
    sw = sr = rw = rr = 0.0
    for n, p in _outcomes(draft_len, a):
        restore = n < draft_len  # snapshot: copy S_n back over the live state
        sw += p * (STATE * draft_len + (STATE if restore else 0))
        sr += p * (STATE if restore else 0)
        rw += p * (RAW * draft_len + (STATE if n > 0 else 0))
        rr += p * ((STATE if n > 0 else 0) + RAW * n)
    return sw, sr, rw, rr


@pytest.mark.parametrize("draft_len", [1, 3, 8])
@pytest.mark.parametrize("a", [0.0, 0.35, 0.9, 1.0])
def test_closed_form_matches_enumeration(draft_len, a):
    sw, sr, rw, rr = _brute(draft_len, a)
    s, r = snapshot_ledger(STATE, draft_len, a), replay_ledger(STATE, RAW, draft_len, a)
    assert s.written == pytest.approx(sw, rel=1e-12) and s.read == pytest.approx(sr, rel=1e-12)
    assert r.written == pytest.approx(rw, rel=1e-12) and r.read == pytest.approx(rr, rel=1e-12)
    assert expected_accepted(draft_len, a) == pytest.approx(
        sum(n * p for n, p in _outcomes(draft_len, a))
    )


def test_outcomes_by_hand():
    """gamma = 4: n = 2 restores one state (snapshot) or reads S0 + 2 records (replay)."""
    s, r = snapshot_outcome(STATE, 4, 2), replay_outcome(STATE, RAW, 4, 2)
    assert (s.held, s.written, s.read) == (5 * STATE, 5 * STATE, STATE)
    assert (r.held, r.written, r.read) == (STATE + 4 * RAW, 4 * RAW + STATE, STATE + 2 * RAW)
    assert snapshot_outcome(STATE, 4, 4).read == 0 and replay_outcome(STATE, RAW, 4, 0).read == 0


@pytest.mark.parametrize("a", [0.2, 0.8])
def test_expected_ledgers_are_the_probability_weighted_outcomes(a):
    sw = sum(p * snapshot_outcome(STATE, 5, n).moved for n, p in _outcomes(5, a))
    rw = sum(p * replay_outcome(STATE, RAW, 5, n).moved for n, p in _outcomes(5, a))
    assert snapshot_ledger(STATE, 5, a).moved == pytest.approx(sw, rel=1e-12)
    assert replay_ledger(STATE, RAW, 5, a).moved == pytest.approx(rw, rel=1e-12)


def test_held_bytes_match_the_k3_reference():
    """Reference §5: K3, 69 layers, gamma = 3: (1 + gamma) fp32 snapshots = 1,656 MiB."""
    mib = 1024**2
    assert snapshot_ledger(STATE, 3, 1.0).held * 69 / mib == pytest.approx(1656)
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
