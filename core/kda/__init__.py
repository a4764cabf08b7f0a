"""KDA (Kimi Delta Attention): the gated delta-rule recurrence of the hybrid model's linear layers.

Exports
  kda_gate            log-space per-channel gate g <= 0 (softplus or K3's lower-bound form)
  kda_step            one token: decay, predict, delta-rule write, read (never mutates the state)
  kda_recurrent       the slow, obviously-correct twin: a loop of kda_step
  kda_chunked         the fast path: chunked WY form, no token loop inside a chunk
  kda_chunked_states  the same, plus the states at chunk boundaries (prefix checkpoints)
  segment_transition  a segment's affine map of the incoming state (context parallelism)
  cp_prefill          split a prefill over P segments, merge their transitions exactly
  cp_volume, cp_crossover, cp_sweep, toy_cp, k3_cp   CP bytes vs MLA ring attention (parallel.py)
  check_tokens        shape/dtype validation shared with core.speculative (validate.py)
  load_fla_kda_naive  flash-linear-attention's naive reference, loaded by file path (reference.py)

Oracles: fla-core's naive_recurrent_kda / naive_chunk_kda (float32, max rel <= 1e-4), and
kda_recurrent in float64 for the chunked form (max abs <= 1e-10); see core.tolerances.
"""

from core.kda.chunked import kda_chunked, kda_chunked_states
from core.kda.gate import GATE_FORMS, kda_gate
from core.kda.parallel import (
    CPGeometry,
    CPPrefill,
    CPSweep,
    CPVolume,
    cp_crossover,
    cp_prefill,
    cp_sweep,
    cp_volume,
    k3_cp,
    merge_states,
    segment_bounds,
    toy_cp,
)
from core.kda.recurrent import kda_recurrent, kda_step
from core.kda.reference import fla_version, load_fla_kda_naive
from core.kda.transition import segment_transition
from core.kda.validate import check_tokens

__all__ = [
    "GATE_FORMS", "CPGeometry", "CPPrefill", "CPSweep", "CPVolume", "check_tokens", "cp_crossover",
    "cp_prefill", "cp_sweep", "cp_volume", "fla_version", "k3_cp", "kda_chunked",
    "kda_chunked_states", "kda_gate", "kda_recurrent", "kda_step", "load_fla_kda_naive",
    "merge_states", "segment_bounds", "segment_transition", "toy_cp",
]
