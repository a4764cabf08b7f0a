"""The KDA replay tab's experiments: core.speculative's cost model under the tab's one
convention (K3's storage dtypes: fp32 state and gate, bf16 k, v, beta and short-conv rows; q not
stored; a short conv of K3's width), and its replay checks, cached per parameter set.

  toy_bytes(heads, dk, dv)   LayerBytes of a toy KDA geometry under the convention
  k3_bytes(dk, dv)           the same at K3's head count (K3's own widths by default)
  replay_check(draft_len, accepted, heads, dk, dv, dtype)   ReplayCheck (seeded inputs, pure;
                             read-only: never mutate its tensors)
  conv_check(draft_len, accepted)   ConvCheck of the short conv's window
"""

from __future__ import annotations

from core.dims import K3, KDADims
from core.experiments.flight import single_flight
from core.speculative import LayerBytes, layer_bytes
from core.speculative.oracles import ConvCheck, ReplayCheck, check_conv, check_replay


def toy_bytes(heads: int, dk: int, dv: int) -> LayerBytes:
    return layer_bytes(KDADims(heads, dk, dv), K3.conv_size)


def k3_bytes(dk: int = K3.kda.dk, dv: int = K3.kda.dv) -> LayerBytes:
    return layer_bytes(KDADims(K3.kda.H, dk, dv), K3.conv_size)


@single_flight(16)
def replay_check(draft_len: int, accepted: int, heads: int, dk: int, dv: int, dtype: str
                 ) -> ReplayCheck:
    return check_replay(draft_len, accepted, heads, dk, dv, dtype)


@single_flight(64)
def conv_check(draft_len: int, accepted: int) -> ConvCheck:
    return check_conv(draft_len, accepted)
