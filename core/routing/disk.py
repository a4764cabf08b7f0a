"""Disk presets and the modelled time of expert reads (assumed figures, not measurements).

Each preset is a sequential read bandwidth and a fixed cost per read (seek or command
latency). Reading n experts of b bytes in total costs n * per_read + b / bandwidth; reads are
modelled one after another (no queue depth), which overstates batched reads on SSD and NVMe.
The numbers are typical datasheet orders of magnitude, labelled as assumptions wherever shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ParamError, check_int


@dataclass(frozen=True, slots=True)
class Disk:
    name: str
    bandwidth: float  # bytes / s
    per_read: float  # s per read

    def seconds(self, reads: int, nbytes: int) -> float:
        """Modelled time to read `reads` experts of `nbytes` bytes in all."""
        check_int("reads", reads, 0)
        check_int("nbytes", nbytes, 0)
        return reads * self.per_read + nbytes / self.bandwidth


DISKS: dict[str, Disk] = {
    d.name: d for d in (
        Disk("HDD", 150e6, 8e-3),  # 7,200 rpm: ~8 ms seek + rotation
        Disk("SATA SSD", 530e6, 100e-6),
        Disk("NVMe", 3.5e9, 20e-6),
        Disk("RAM", 20e9, 0.0),  # page-cached shard: a memcpy
    )
}


def disk(name: str) -> Disk:
    """The preset of that name; ParamError lists the presets otherwise."""
    if name not in DISKS:
        raise ParamError(f"disk must be one of {list(DISKS)}, got {name!r}")
    return DISKS[name]
