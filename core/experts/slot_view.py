"""ExpertView: zero-copy, read-only views of one resident expert's tensors inside its slot.

A view records its slot's generation. The slot's generation moves whenever the slot is
reserved for another key, so `check()` turns "this view is still the expert I asked for"
into a checked contract; leases keep it true until the end of the token.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from core.experts.errors import StaleView
from core.experts.layout import ExpertRef

if TYPE_CHECKING:
    import torch

# safetensors dtype -> numpy dtype of the view (formats numpy lacks are exposed as raw bits).
NP_DTYPES: dict[str, np.dtype] = {
    "BOOL": np.dtype(np.bool_), "U8": np.dtype(np.uint8), "I8": np.dtype(np.int8),
    "F8_E4M3": np.dtype(np.uint8), "F8_E5M2": np.dtype(np.uint8), "F8_E8M0": np.dtype(np.uint8),
    "U16": np.dtype("<u2"), "I16": np.dtype("<i2"), "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"), "U32": np.dtype("<u4"), "I32": np.dtype("<i4"),
    "F32": np.dtype("<f4"), "U64": np.dtype("<u8"), "I64": np.dtype("<i8"),
    "F64": np.dtype("<f8"), "C64": np.dtype("<c8"),
}
_TORCH_REINTERPRET = {
    "BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
    "F8_E8M0": "float8_e8m0fnu",
}


@dataclass(frozen=True, slots=True, eq=False, kw_only=True)
class ExpertView:
    """The tensors of (layer, expert) in canonical order, valid while `generation` is current."""

    layer: int
    expert: int
    slot: int
    generation: int
    names: tuple[str, ...]
    dtypes: tuple[str, ...]  # safetensors dtypes
    arrays: tuple[np.ndarray, ...]  # read-only
    _writable: tuple[np.ndarray, ...] = field(repr=False, compare=False)
    _generations: list[int] = field(repr=False, compare=False)

    def __getitem__(self, key: int | str) -> np.ndarray:
        if isinstance(key, str):
            return self.arrays[self.names.index(key)]
        return self.arrays[key]

    def __len__(self) -> int:
        return len(self.arrays)

    def valid(self) -> bool:
        return self._generations[self.slot] == self.generation

    def check(self) -> ExpertView:
        """Return self, or raise StaleView if the slot was reused since this view was made."""
        if not self.valid():
            raise StaleView(
                f"view of layer {self.layer} expert {self.expert} is stale: slot {self.slot} "
                f"moved from generation {self.generation} to {self._generations[self.slot]}"
            )
        return self

    def payload(self) -> bytes:
        """All tensors' bytes concatenated in canonical order (for byte-exact comparisons)."""
        return b"".join(a.tobytes() for a in self.arrays)

    def torch(self) -> tuple[torch.Tensor, ...]:
        """Zero-copy torch tensors over the same slot bytes (do not write through them)."""
        import torch

        out = []
        for a, dt in zip(self._writable, self.dtypes, strict=True):
            t = torch.from_numpy(a)
            if dt in _TORCH_REINTERPRET:
                t = t.view(getattr(torch, _TORCH_REINTERPRET[dt]))
            out.append(t)
        return tuple(out)


def make_view(
    ref: ExpertRef,
    names: tuple[str, ...],
    slot: int,
    generation: int,
    slot_mem: np.ndarray,
    pad: int,
    generations: list[int],
) -> ExpertView:
    """Views of the slot at pad + each tensor's payload offset; `slot_mem` is the slot's bytes."""
    writable, readonly = [], []
    for t, off in zip(ref.tensors, ref.payload_offsets, strict=True):
        start = pad + off
        a = slot_mem[start : start + t.nbytes].view(NP_DTYPES[t.dtype]).reshape(t.shape)
        r = a.view()
        r.flags.writeable = False
        writable.append(a)
        readonly.append(r)
    return ExpertView(layer=ref.layer, expert=ref.expert, slot=slot, generation=generation,
                      names=names, dtypes=tuple(t.dtype for t in ref.tensors),
                      arrays=tuple(readonly), _writable=tuple(writable), _generations=generations)
