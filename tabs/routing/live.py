"""Live text (never a figure, never baselined): modelled tokens per second per arm, from the
compute time of one decode step measured now on this machine and each arm's recorded reads."""

from __future__ import annotations

from core.experiments.routing import STEPS, setting, step_seconds
from core.experiments.routing_grid import DIMS
from core.routing.disk import disk as disk_preset
from core.routing.speed import io_seconds, tokens_per_s
from tabs.routing.common import ARM_NAMES
from tabs.spec import Progress, no_progress


def routing_speed(M: int, J: int, method: str, alpha: float, capacity: str, disk: str,
                  progress: Progress = no_progress) -> str:
    s = setting(M, J, method, alpha, capacity)
    dk = disk_preset(disk)
    L = DIMS.n_layers
    compute = step_seconds(lambda i, n: progress(i, n, "one decode step"))
    rows = []
    for a in ARM_NAMES:
        r = s.arms[a]
        demand, late = io_seconds(r, disk, compute, L)
        rows.append(f"| {a} | {100 * r.hit_rate:.0f}% | {demand * 1e3:.2f} | {late * 1e3:.2f} | "
                    f"**{tokens_per_s(r, disk, compute, L):.1f}** |")
    return (
        f"One decode step computes in **{compute * 1e3:.1f} ms** on this machine just now "
        f"(median of {STEPS}, all experts in memory). Add each arm's disk time, modelled for "
        f"an assumed **{disk}** ({dk.bandwidth / 1e9:g} GB/s, {dk.per_read * 1e6:g} µs per "
        f"read), at {s.capacity} slots, {s.words()}:\n\n"
        "| arm | hit | demand reads, ms/token | prefetch late, ms/token | modelled tok/s |\n"
        "|---|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n\n"
        "A prefetch costs time only when its read outlasts the compute of the layer it hides "
        "behind. Times vary from run to run, so they appear only here, never on a figure."
    )
