"""Expert layout: which tensors make an expert, how they are named, and where they lie.

An expert is a fixed list of tensors (kimi-k3-in-c: six U8 matrices w1p, w1s, w2p, w2s, w3p,
w3s). `resolve_expert` finds them in a ShardIndex and decides how they reach a slot:
contiguous experts come in one read with their on-disk offsets; scattered ones are packed
into the canonical order by one read per tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.dims import MXFP4_BLOCK
from core.errors import ParamError
from core.experts.errors import ExpertLoadError
from core.experts.shards import ShardIndex, TensorEntry

K3_TEMPLATE = "language_model.model.layers.{layer}.block_sparse_moe.experts.{expert}.{w}.{part}"
K3_PARTS: tuple[tuple[str, str], ...] = (
    ("w1", "weight_packed"), ("w1", "weight_scale"),
    ("w2", "weight_packed"), ("w2", "weight_scale"),
    ("w3", "weight_packed"), ("w3", "weight_scale"),
)
K3_SHORT: tuple[str, ...] = ("w1p", "w1s", "w2p", "w2s", "w3p", "w3s")


@dataclass(frozen=True, slots=True)
class ExpertLayout:
    """Names of an expert's tensors: template fields {layer} {expert} {w} {part}.

    `mxfp4` adds kimi-k3-in-c's geometry checks on (packed, scale) pairs: equal rows and
    scale cols x 32 == 2 x packed cols.
    """

    template: str = K3_TEMPLATE
    parts: tuple[tuple[str, str], ...] = K3_PARTS
    short_names: tuple[str, ...] = K3_SHORT
    mxfp4: bool = True

    def __post_init__(self) -> None:
        for field in ("{layer}", "{expert}"):
            if field not in self.template:
                raise ParamError(f"template must contain {field}, got {self.template!r}")
        try:
            self.template.format(layer=0, expert=0, w="w", part="part")
        except (KeyError, IndexError, ValueError) as e:
            raise ParamError(f"template may use only {{layer}} {{expert}} {{w}} {{part}}, got "
                             f"{self.template!r} ({type(e).__name__}: {e})") from None
        if not self.parts:
            raise ParamError("parts must name at least one tensor, got ()")
        if len(self.short_names) != len(self.parts):
            raise ParamError(f"short_names must give one name per part ({len(self.parts)}), "
                             f"got {len(self.short_names)}: {self.short_names!r}")
        if self.mxfp4 and len(self.parts) % 2:
            raise ParamError(f"parts must come in (packed, scale) pairs when mxfp4 is set, "
                             f"got {len(self.parts)} parts")

    def name(self, layer: int, expert: int, i: int) -> str:
        w, part = self.parts[i]
        return self.template.format(layer=layer, expert=expert, w=w, part=part)


K3_LAYOUT = ExpertLayout()


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpertRef:
    """A resolved expert. `payload_offsets[i]` is tensor i's offset from the payload start."""

    layer: int
    expert: int
    shard: int
    tensors: tuple[TensorEntry, ...]  # canonical order
    payload_offsets: tuple[int, ...]
    nbytes: int  # payload bytes (sum of the tensors)
    contiguous: bool
    lo: int  # lowest file offset of any tensor
    hi: int  # highest end


def resolve_expert(index: ShardIndex, layout: ExpertLayout, layer: int, expert: int) -> ExpertRef:
    """Find an expert's tensors; raise ExpertLoadError naming the first problem."""
    tensors = []
    for i in range(len(layout.parts)):
        name = layout.name(layer, expert, i)
        t = index.get(name)
        if t is None:
            raise ExpertLoadError(f"layer {layer} expert {expert}: no tensor {name!r}")
        tensors.append(t)
    shards = {t.shard for t in tensors}
    if len(shards) != 1:
        raise ExpertLoadError(
            f"layer {layer} expert {expert}: tensors span shards {sorted(shards)}; "
            "all of an expert's tensors must lie in one shard"
        )
    if layout.mxfp4:
        _check_mxfp4(layer, expert, tensors)
    lo = min(t.offset for t in tensors)
    hi = max(t.end for t in tensors)
    nbytes = sum(t.nbytes for t in tensors)
    contiguous = hi - lo == nbytes
    if contiguous:
        offsets = tuple(t.offset - lo for t in tensors)
    else:
        acc, offs = 0, []
        for t in tensors:
            offs.append(acc)
            acc += t.nbytes
        offsets = tuple(offs)
    shard = shards.pop()
    return ExpertRef(layer=layer, expert=expert, shard=shard, tensors=tuple(tensors),
                     payload_offsets=offsets, nbytes=nbytes, contiguous=contiguous, lo=lo, hi=hi)


def _check_mxfp4(layer: int, expert: int, tensors: list[TensorEntry]) -> None:
    for packed, scale in zip(tensors[0::2], tensors[1::2], strict=True):
        ok = (
            len(packed.shape) == 2
            and len(scale.shape) == 2
            and packed.shape[0] == scale.shape[0]
            and scale.shape[1] * MXFP4_BLOCK == 2 * packed.shape[1]
        )
        if not ok:
            raise ExpertLoadError(
                f"layer {layer} expert {expert}: {packed.name} {list(packed.shape)} and "
                f"{scale.name} {list(scale.shape)} are not an MXFP4 (packed, scale) pair"
            )
