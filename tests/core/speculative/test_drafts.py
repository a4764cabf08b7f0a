"""Replay rollback: verify_and_replay == the recurrence, and the snapshot-vs-raw byte model.

Pinned: for every n in [0, D], replaying n accepted drafts equals kda_recurrent over those n
tokens bit for bit in float64 (outputs and state); n = 0 returns the committed state (a copy);
the committed state is never mutated; n outside [0, D] raises ParamError naming n_accepted.
The byte ratios of reference §5: K3 63.9, g in bf16 85.1, one dtype with q 31.9 / 7.94 / 3.94 /
1.94 at d = 128 / 32 / 16 / 8 (the write-up's "H=16, d=32 gives 4.0x" is 7.94).
"""

from __future__ import annotations

import pytest
import torch

from core.dims import K3, KDADims
from core.errors import ParamError
from core.kda import kda_recurrent
from core.speculative import DraftProjections, rollback_bytes, verify_and_replay
from tests.tolerance import EXACT, assert_close

D = 6


def _committed(seed=7):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(2, 3, 8, 5, generator=gen, dtype=torch.float64)  # [B, H, K, V]


@pytest.fixture
def drafts():
    return DraftProjections.from_random(2, D, 3, 8, 5, torch.float64, seed=3)


def test_two_accepted_drafts_by_hand():
    """The replay's arithmetic checked by hand, not through the recurrence it shares a step with.

    S0 = [[1, 2], [3, 4]] (K = V = 2, one head), scale 1.
    draft 1: k = e0, g = (ln 1/2, 0), beta 1/2, v = [10, 20], q = [1, 1]:
        decay -> [[.5, 1], [3, 4]]; u = row 0 = [.5, 1]; row 0 += .5 ([10, 20] - u)
        S1 = [[5.25, 10.5], [3, 4]]; o1 = q^T S1 = [8.25, 14.5]
    draft 2: k = e1, g = (0, ln 1/2), beta 1, v = [1, 1], q = [0, 1]:
        decay -> [[5.25, 10.5], [1.5, 2]]; u = row 1 = [1.5, 2]; row 1 += [1, 1] - u
        S2 = [[5.25, 10.5], [1, 1]]; o2 = row 1 = [1, 1]
    draft 3 is rejected and must leave no trace.
    """
    f64 = torch.float64
    half = torch.log(torch.tensor(0.5, dtype=f64)).item()
    q = torch.tensor([[1.0, 1.0], [0.0, 1.0], [5.0, 5.0]], dtype=f64)
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=f64)
    v = torch.tensor([[10.0, 20.0], [1.0, 1.0], [99.0, 99.0]], dtype=f64)
    g = torch.tensor([[half, 0.0], [0.0, half], [half, half]], dtype=f64)
    beta = torch.tensor([0.5, 1.0, 1.0], dtype=f64)
    drafts = DraftProjections(q=q[None, :, None], k=k[None, :, None], v=v[None, :, None],
                              g=g[None, :, None], beta=beta[None, :, None])  # [B=1, D=3, H=1, *]
    s0 = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=f64)  # [1, 1, 2, 2]
    state, out = verify_and_replay(s0, drafts, 2, scale=1.0)
    assert_close(torch.tensor([[[[5.25, 10.5], [1.0, 1.0]]]]), state, EXACT, "state")
    assert_close(torch.tensor([[[[8.25, 14.5]], [[1.0, 1.0]]]]), out, EXACT, "outputs")


class TestVerifyAndReplay:
    @pytest.mark.parametrize("n", range(D + 1), ids=[f"n{n}" for n in range(D + 1)])
    def test_equals_recurrence_bit_for_bit(self, drafts, n):
        """Outputs [B, n, H, V] and state equal kda_recurrent over the n accepted drafts."""
        committed = _committed()
        before = committed.clone()
        state, out = verify_and_replay(committed, drafts, n)
        p = drafts.prefix(n)
        o_ref, s_ref = kda_recurrent(p.q, p.k, p.v, p.g, p.beta, initial_state=committed)
        assert out.shape == (2, n, 3, 5)
        assert_close(o_ref, out, EXACT, f"outputs, n={n}")
        assert_close(s_ref, state, EXACT, f"state, n={n}")
        assert_close(before, committed, EXACT, "committed state untouched")

    def test_zero_accepted_is_a_copy(self, drafts):
        """n = 0: the state comes back unchanged, as a clone, with an empty output."""
        committed = _committed()
        state, out = verify_and_replay(committed, drafts, 0)
        assert out.shape == (2, 0, 3, 5) and state is not committed
        assert_close(committed, state, EXACT, "n=0 state")
        state.add_(1.0)
        assert_close(_committed(), committed, EXACT, "clone is independent")

    @pytest.mark.parametrize("n", [-1, D + 1, 2.5], ids=["neg", "D+1", "float"])
    def test_out_of_range(self, drafts, n):
        with pytest.raises(ParamError, match="n_accepted"):
            verify_and_replay(_committed(), drafts, n)

    def test_state_shape_checked(self, drafts):
        with pytest.raises(ParamError, match="state"):
            verify_and_replay(torch.zeros(2, 3, 5, 8, dtype=torch.float64), drafts, 1)

    def test_missing_state_is_a_clear_error(self, drafts):
        with pytest.raises(ParamError, match="committed_state"):
            verify_and_replay(None, drafts, 1)


class TestDraftProjections:
    def test_from_random_is_deterministic_and_well_formed(self):
        """Same seed, same tensors; q, k unit norm; g in [lb, 0]; beta in (0, 1)."""
        a = DraftProjections.from_random(1, 4, 2, 8, 3, torch.float64, seed=5, gate_lower_bound=-2)
        b = DraftProjections.from_random(1, 4, 2, 8, 3, torch.float64, seed=5, gate_lower_bound=-2)
        c = DraftProjections.from_random(1, 4, 2, 8, 3, torch.float64, seed=6, gate_lower_bound=-2)
        for name in ("q", "k", "v", "g", "beta"):
            assert_close(getattr(a, name), getattr(b, name), EXACT, name)
        assert not torch.equal(a.v, c.v)
        assert a.draft_len == 4 and a.v.shape == (1, 4, 2, 3)
        assert float((a.q.norm(dim=-1) - 1).abs().max()) < 1e-12
        assert bool((a.g >= -2).all() and (a.g <= 0).all())
        assert bool((a.beta > 0).all() and (a.beta < 1).all())

    def test_shapes_are_validated(self, drafts):
        with pytest.raises(ParamError, match="beta"):
            DraftProjections(q=drafts.q, k=drafts.k, v=drafts.v, g=drafts.g,
                             beta=drafts.beta[:, :2])
        with pytest.raises(ParamError, match="v"):
            DraftProjections(q=drafts.q, k=drafts.k, v=drafts.v[:, :, :1], g=drafts.g,
                             beta=drafts.beta)


RATIOS = [
    pytest.param(dict(H=96, dk=128, dv=128), 65536 / 1026, 63.9, id="K3-fp32-state-fp32-g"),
    pytest.param(dict(H=96, dk=128, dv=128, g_bytes=2), 65536 / 770, 85.1, id="K3-bf16-g"),
]
ONE_DTYPE = {128: (31.9, 1), 32: (7.94, 2), 16: (3.94, 2), 8: (1.94, 2)}  # (value, decimals)


class TestRollbackBytes:
    @pytest.mark.parametrize(("kw", "exact", "rounded"), RATIOS)
    def test_k3_ratios(self, kw, exact, rounded):
        cost = rollback_bytes(**kw, draft_len=3)
        assert cost.ratio == pytest.approx(exact, rel=1e-12)
        assert round(cost.ratio, 1) == rounded

    @pytest.mark.parametrize("d", sorted(ONE_DTYPE), ids=[f"d{d}" for d in sorted(ONE_DTYPE)])
    def test_one_dtype_with_q(self, d):
        """dk dv / (3 dk + dv + 1) when every field has the same width and q is kept."""
        widths = dict(state_bytes=2, k_bytes=2, v_bytes=2, g_bytes=2, beta_bytes=2, q_bytes=2)
        cost = rollback_bytes(16, d, d, 4, include_q=True, **widths)
        assert cost.ratio == pytest.approx(d * d / (3 * d + d + 1), rel=1e-12)
        value, decimals = ONE_DTYPE[d]
        assert round(cost.ratio, decimals) == value

    def test_write_up_slip(self):
        """H=16, dk=dv=32 is 1024/129 = 7.94, not 4.0."""
        widths = dict(state_bytes=4, k_bytes=4, v_bytes=4, g_bytes=4, beta_bytes=4, q_bytes=4)
        cost = rollback_bytes(16, 32, 32, 4, include_q=True, **widths)
        assert cost.ratio == pytest.approx(1024 / 129) and abs(cost.ratio - 4.0) > 3

    def test_ratio_independent_of_heads_and_length(self):
        base = rollback_bytes(96, 128, 128, 1)
        for H, n in [(1, 1), (7, 3), (96, 16)]:
            cost = rollback_bytes(H, 128, 128, n)
            assert cost.ratio == pytest.approx(base.ratio, rel=1e-12)
            assert cost.saved_bytes == n * H * (base.snapshot_bytes - base.raw_bytes) // 96

    def test_k3_absolute(self):
        """69 layers, gamma = 3: (1 + gamma) snapshots 1,656 MiB vs raw records 25.9 MiB."""
        cost = rollback_bytes(K3.kda.H, K3.kda.dk, K3.kda.dv, 4)
        mib = 1024**2
        assert cost.snapshot_bytes * K3.n_kda / mib == pytest.approx(1656)
        assert cost.raw_bytes * K3.n_kda / mib == pytest.approx(25.9, abs=0.05)

    def test_dims_and_bad_inputs(self):
        # one K3 KDA state is 6 MiB in fp32 (reference §1): both ledgers must say so
        assert K3.kda.state_numel * 4 == K3.kda_state_bytes == 6 * 2**20
        with pytest.raises(ParamError, match="H"):
            rollback_bytes(0, 128, 128, 1)
        with pytest.raises(ParamError, match="g_bytes"):
            rollback_bytes(1, 8, 8, 1, g_bytes=0)
        with pytest.raises(ParamError, match="dk"):
            KDADims(H=1, dk=0, dv=1)
