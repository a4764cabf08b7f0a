"""Modelled speed of a recorded pass: compute per token plus disk time under a preset.

seconds per token = compute + demand reads at the preset's speed + prefetch lateness, where a
prefetch issue's lateness is its modelled load time beyond the compute time of the one layer
it overlaps (compute / n_layers), as in core.routing.arm_report. The compute time is an input:
the tab measures it live, so these numbers never appear on a baselined figure. An issue's
bytes are its group's mean (PassRecord.issues keeps bytes per group of equal read counts).
"""

from __future__ import annotations

from core.errors import check_int
from core.routing.disk import Disk, disk
from core.routing.record import PassRecord


def io_seconds(rec: PassRecord, preset: str | Disk, compute_s: float, n_layers: int
               ) -> tuple[float, float]:
    """(demand seconds, prefetch lateness seconds) per token under a preset (a name, or a
    Disk of one's own: a what-if disk)."""
    check_int("n_layers", n_layers, 1)
    dk = preset if isinstance(preset, Disk) else disk(preset)
    demand = dk.seconds(rec.demand_reads, rec.demand_bytes)
    t_layer = compute_s / n_layers
    late = 0.0
    for reads, (n, nbytes) in rec.issues.items():
        load = dk.seconds(int(reads), 0) + nbytes / n / dk.bandwidth
        late += n * max(0.0, load - t_layer)
    return demand / rec.positions, late / rec.positions


def tokens_per_s(rec: PassRecord, preset: str | Disk, compute_s: float, n_layers: int
                 ) -> float:
    """Modelled decode tokens per second with `compute_s` of compute per token."""
    demand, late = io_seconds(rec, preset, compute_s, n_layers)
    return 1.0 / (compute_s + demand + late)
