"""Context parallelism: the merge of segment transitions is exact; the byte model is right.

Pinned: P segments run from zeros and merged with S <- M S + S_ext equal the float64 recurrence
(max abs <= 1e-10) for ragged splits, with and without an initial state, states and outputs;
dropping M (summing the local states) or sending M in bf16 breaks it. Volumes: a K3 message is
H (d_k d_v + d_k^2) x 4 B = 12 MiB (the all-gather receives 84 MiB at P = 8) plus a 216 KiB
halo, independent of T; the MLA ring receives every other rank's shard of latent KV; the
crossover is where the two are equal (about 87k tokens at P = 8 per layer) and KDA moves more
below it, less above it.
"""

from __future__ import annotations

import pytest
import torch

from core.dims import K3
from core.errors import ParamError
from core.kda import (
    cp_crossover,
    cp_prefill,
    cp_sweep,
    cp_volume,
    k3_cp,
    kda_recurrent,
    merge_states,
    segment_bounds,
    toy_cp,
)
from core.model.config import TOY
from core.speculative.drafts import DraftProjections
from tests.tolerance import FP64_CHUNKED, assert_close

MIB, KIB = 2**20, 2**10


def _inputs(T: int, seed: int = 0, B: int = 1, H: int = 2, K: int = 8, V: int = 6,
            lb: float = -5.0):
    """g uniform in [lb, 0]: a weak lower bound keeps memory across segments (M matters)."""
    d = DraftProjections.from_random(B, T, H, K, V, torch.float64, seed=seed, gate_lower_bound=lb)
    return d.q, d.k, d.v, d.g, d.beta


class TestExactMerge:
    @pytest.mark.parametrize(("T", "P"), [(1, 1), (37, 2), (37, 5), (130, 8)])
    @pytest.mark.parametrize("start", [False, True])
    @pytest.mark.parametrize("lb", [-5.0, -0.05])
    def test_merge_equals_the_recurrence(self, T, P, start, lb):
        x = _inputs(T, seed=T + P, lb=lb)
        S0 = torch.randn(1, 2, 8, 6, dtype=torch.float64) if start else None
        o_ref, S_ref = kda_recurrent(*x, initial_state=S0)
        cp = cp_prefill(*x, ranks=P, initial_state=S0)
        assert len(cp.bounds) == P
        assert_close(S_ref, cp.final_state, FP64_CHUNKED, f"CP state T={T} P={P}")
        assert_close(o_ref, cp.outputs, FP64_CHUNKED, f"CP outputs T={T} P={P}")
        want = S0 if S0 is not None else torch.zeros_like(S_ref)
        for (a, b), S_in in zip(cp.bounds, cp.incoming, strict=True):  # every boundary state
            assert_close(want, S_in, FP64_CHUNKED, f"state entering token {a}")
            want = kda_recurrent(*(t[:, a:b] for t in x), initial_state=want)[1]

    def test_the_transition_is_needed_and_must_stay_fp32(self):
        """The two errors of reference §10: omitting M, and M in bf16."""
        x = _inputs(96, seed=3, lb=-0.05)
        S_ref = kda_recurrent(*x)[1]
        cp = cp_prefill(*x, ranks=4)
        no_m = sum(cp.local_states)
        assert float((no_m - S_ref).abs().max()) > 1e-3
        bf16 = [M.to(torch.bfloat16).to(torch.float64) for M in cp.transitions]
        low = merge_states(bf16, cp.local_states)[-1]
        assert float((low - S_ref).abs().max()) > 1e-6  # far outside 1e-10

    def test_segments_are_contiguous_and_balanced(self):
        assert segment_bounds(10, 3) == ((0, 4), (4, 7), (7, 10))
        assert segment_bounds(5, 5) == tuple((i, i + 1) for i in range(5))


class TestVolume:
    def test_k3_numbers_from_the_dimensions(self):
        geo = k3_cp()
        H, d = K3.kda_heads, K3.kda_head_dim
        assert geo.message_bytes == H * (d * d + d * d) * 4 == 12 * MIB
        assert geo.halo_bytes == (K3.conv_size - 1) * 3 * H * d * 2 == 216 * KIB
        v = cp_volume(geo, 100_000, 8)
        assert v.kda_gather == 7 * 12 * MIB == 84 * MIB
        assert v.kda_scan == 12 * MIB and v.scan_hops == 7
        assert v.mla_ring == pytest.approx(7 / 8 * 100_000 * 1152)

    def test_kda_volume_does_not_grow_with_length_but_mla_does(self):
        geo = k3_cp()
        short, long = cp_volume(geo, 1_000, 8), cp_volume(geo, 1_000_000, 8)
        assert short.kda == long.kda
        assert long.mla_ring == pytest.approx(1000 * short.mla_ring)

    def test_ring_receives_every_other_shard(self):
        """Not a full-KV all-gather (P x) and not predecessors only: (P - 1) of P shards."""
        geo = toy_cp(TOY)
        T, P = 4096, 8
        shards = [b - a for a, b in segment_bounds(T, P)]
        for r in range(P):
            got = (T - shards[r]) * geo.mla_bytes_per_token
            assert got == cp_volume(geo, T, P).mla_ring

    @pytest.mark.parametrize("geo", [toy_cp(TOY), k3_cp()], ids=["toy", "K3"])
    @pytest.mark.parametrize("P", [2, 8, 64])
    def test_crossover_is_where_the_volumes_meet(self, geo, P):
        t = cp_crossover(geo, P)
        below, above = cp_volume(geo, int(t * 0.99), P), cp_volume(geo, int(t * 1.01) + 1, P)
        assert below.kda > below.mla_ring and above.kda < above.mla_ring
        m = cp_crossover(geo, P, whole_model=True)
        assert m == pytest.approx(t * geo.n_kda / geo.n_mla)
        below, above = cp_volume(geo, int(m * 0.99), P), cp_volume(geo, int(m * 1.01) + 1, P)
        assert below.model_kda > below.model_mla and above.model_kda < above.model_mla

    def test_crossover_values(self):
        """K3 at P = 8: 8 x (84 MiB + 216 KiB) / (7 x 1,152 B), about 87k tokens; the toy
        model's 32 KiB message over 128 B tokens crosses within a few hundred tokens."""
        assert cp_crossover(k3_cp(), 8) == pytest.approx(8 * (84 * MIB + 216 * KIB) / (7 * 1152))
        assert 87_000 < cp_crossover(k3_cp(), 8) < 88_000
        assert toy_cp(TOY).message_bytes == 4 * (32 * 32 * 2) * 4
        assert cp_crossover(toy_cp(TOY), 2) == pytest.approx(2 * (32 * KIB + 3 * 384 * 4) / 128)
        assert cp_crossover(k3_cp(), 1) is None

    def test_sweep_is_drawable(self):
        s = cp_sweep(k3_cp(), 8, [1_000, 100_000, 1_000_000])
        assert [p.tokens for p in s.points] == [1_000, 100_000, 1_000_000]
        assert s.crossover == cp_crossover(k3_cp(), 8)
        assert s.model_crossover == cp_crossover(k3_cp(), 8, whole_model=True)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: segment_bounds(3, 4), "ranks"),
    (lambda: segment_bounds(0, 1), "tokens"),
    (lambda: cp_volume(k3_cp(), 10, 0), "ranks"),
    (lambda: cp_volume(k3_cp(), 0, 2), "tokens"),
    (lambda: cp_prefill(*_inputs(4), ranks=5), "ranks"),
    (lambda: cp_sweep(k3_cp(), 2, []), "tokens"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ParamError, match=name):
        call()
