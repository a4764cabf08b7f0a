"""ExpertCache: a fixed arena of expert slots streamed from safetensors shards.

Serial path `get` (hit, or miss -> victim -> read -> publish) and batch path `get_many`
(reserve serially as INFLIGHT, read in parallel sorted by offset, publish serially only what
fully arrived). `compat="k3-v1"` reproduces kimi-k3-in-c v1.0.0's counters, quirks included;
the default mode fixes them: batch members are stamped and protected, warm() is not a
request, a read the shard cannot satisfy evicts nobody, and handed-out views are leased.
Not thread-safe for concurrent callers; only the reads inside get_many run in parallel.

Batch ids: fixed mode raises ParamError on an out-of-range layer or id, or on more than 64
ids. Compat mode does what upstream v1.0.0's getmany does: it skips out-of-range ids (all of
them when the layer is out of range) and stops after 64 reservations, silently; the ids it
ignores are counted in `batch_ids_dropped`, a lab counter upstream does not have. Ids that are
not integers raise ParamError in both modes.

Demand batches (fixed mode): `get_many(layer, ids, demand=True)` reads the experts a layer
needs now in parallel; they are demand misses, never prefetches (core.experts.stats).

Leases (fixed mode): every view get() hands out is leased until the next begin_layer(), as
the reference's section 12 requires: its slot is not evicted, by a get, get_many or warm, however
many gets follow. A layer can hold at most n_slots - pinned leases; once every unpinned slot
is leased, a miss raises SlotsExhausted (counted as a drop, no slot touched) until
begin_layer() releases them. Callers call begin_layer() once a layer's views are consumed.
Compat mode leases nothing, as upstream.
"""

from __future__ import annotations

import numpy as np

from core.errors import ParamError, check_choice, check_int
from core.experts.accounting import Accountant
from core.experts.errors import BudgetTooSmall, ExpertLoadError, NotResident
from core.experts.events import CacheSnapshot, Event, EventLog, SlotInfo, TraceBuffer
from core.experts.layout import K3_LAYOUT, ExpertLayout, ExpertRef, resolve_expert
from core.experts.loader import SlotLoader
from core.experts.reader import PAGE, round_up, slot_stride
from core.experts.shards import ShardIndex
from core.experts.slot_view import ExpertView
from core.experts.slots import DEMAND, DEMAND_BATCH, PREFETCH, WARM, Leases, SlotTable
from core.experts.stats import CacheStats

MAX_BATCH = 64  # K3_MAX_TOPK: most ids per get_many (fixed), most reservations (compat)


def _integer(name: str, value: object) -> int:
    if isinstance(value, np.integer):
        value = int(value)
    return check_int(name, value, -(1 << 62))


def _index(name: str, value: object, n: int) -> int:
    if isinstance(value, np.integer):
        value = int(value)
    return check_int(name, value, 0, n - 1)


class ExpertCache:
    """Expert slots over a ShardIndex; see the module docstring for the two modes."""

    def __init__(
        self,
        index: ShardIndex,
        n_layers: int,
        n_experts: int,
        topk: int,
        budget_bytes: int,
        compat: str | None = None,
        chunk_bytes: int | None = None,
        *,
        name_template: str | None = None,
        layout: ExpertLayout = K3_LAYOUT,
        direct_io: bool = True,
        max_workers: int = 8,
        log_capacity: int = 4096,
        trace_limit: int = 1 << 22,
    ) -> None:
        if not isinstance(index, ShardIndex):
            raise ParamError(f"index must be a ShardIndex, got {type(index).__name__}")
        self.n_layers = check_int("n_layers", n_layers, 1)
        self.n_experts = check_int("n_experts", n_experts, 1)
        self.topk = check_int("topk", topk, 1, min(MAX_BATCH, self.n_experts))
        budget = check_int("budget_bytes", budget_bytes, 1)
        self.compat = check_choice("compat", compat, [None, "k3-v1"])
        if chunk_bytes is not None:  # upstream: minimum 4096, rounded up to 4096
            chunk_bytes = round_up(check_int("chunk_bytes", chunk_bytes, PAGE, 1 << 30), PAGE)
        self.chunk_bytes = chunk_bytes
        check_int("max_workers", max_workers, 1, 256)
        check_int("log_capacity", log_capacity, 1)
        check_int("trace_limit", trace_limit, 0)
        if name_template is not None:
            layout = ExpertLayout(name_template, layout.parts, layout.short_names, layout.mxfp4)
        self.layout = layout
        self.index = index
        self._k3 = self.compat == "k3-v1"

        self.slot_bytes = slot_stride(self._probe().nbytes)
        self.n_slots = budget // self.slot_bytes
        if self.n_slots < self.topk + 1:
            raise BudgetTooSmall(
                f"budget_bytes must be >= (topk + 1) x slot_bytes = {self.topk + 1} x "
                f"{self.slot_bytes} = {(self.topk + 1) * self.slot_bytes}, got {budget} "
                f"({self.n_slots} slot(s))"
            )
        self._t = SlotTable(self.n_slots, self.n_layers * self.n_experts)
        self._acct = Accountant(self._t, self._k3)
        self._log = EventLog(log_capacity)
        self._io = SlotLoader(
            index, layout, self._t, self._acct, self._log, n_experts=self.n_experts,
            slot_bytes=self.slot_bytes, chunk_bytes=chunk_bytes, compat=self._k3,
            direct_io=direct_io, max_workers=max_workers,
        )
        self._leases = Leases(self._t, enabled=not self._k3)
        self._trace = TraceBuffer(trace_limit)
        self._hist = np.zeros((self.n_layers, self.n_experts), np.int64)

    @property
    def direct_io(self) -> bool:
        """Whether O_DIRECT is in use (tmpfs refuses it; reads then use the page cache)."""
        return self._io.files.direct

    def get(self, layer: int, expert: int) -> ExpertView:
        """The expert's tensors, loaded on a miss; raises ExpertLoadError if it cannot be.

        Fixed mode leases the slot until begin_layer(): no later call evicts it before then.
        A miss with every unpinned slot leased raises SlotsExhausted (a counted drop).
        """
        key = self._key(layer, expert)
        layer, expert = key // self.n_experts, key % self.n_experts
        self._hist[layer, expert] += 1
        self._trace.append(layer, expert)
        t = self._t
        s = t.slot_of[key]
        if s >= 0:
            kind = self._acct.hit(s)
            t.stamp(s)
            self._leases.lease(s)
            self._log.add(kind, layer, expert, s, t.origin[s])
            return t.views[s]
        self._acct.miss()
        self._log.add("miss", layer, expert)
        s = self._io.admit(layer, expert, DEMAND)
        self._leases.lease(s)
        return t.views[s]

    def get_many(self, layer: int, ids: list[int] | tuple[int, ...] | np.ndarray,
                 demand: bool = False) -> int:
        """Load a batch of one layer's experts in parallel; returns how many were published.

        Never touches hits, misses, hist or trace. Members already resident are skipped
        (fixed mode stamps them and protects them from the batch's own reservations);
        duplicates are read once; members that cannot be read are skipped and counted.
        Fixed mode raises ParamError on a bad layer or id or more than 64 ids; compat mode
        skips them as upstream does (see the module docstring).

        demand=False: a prefetch, loaded ahead of use (origin "prefetch"). demand=True: a
        demand batch, the experts the layer needs now (origin "demand_batch"): the first get
        of each member counts as a demand miss, never as a prefetched hit. Fixed mode only.
        """
        if demand is not False and demand is not True:
            raise ParamError(f"demand must be a bool, got {demand!r}")
        if self._k3:
            if demand:
                raise ParamError("demand batches are a fixed-mode feature (compat=None); "
                                 "compat='k3-v1' reproduces upstream's getmany only")
            return self._get_many_k3(layer, list(ids))
        layer = _index("layer", layer, self.n_layers)
        ids = [_index("ids[]", e, self.n_experts) for e in list(ids)]
        check_int("len(ids)", len(ids), 0, MAX_BATCH)
        t = self._t
        protected: set[int] = set()
        for e in ids:
            s = t.slot_of[layer * self.n_experts + e]
            if s >= 0 and s not in protected:
                t.stamp(s)
                protected.add(s)
        origin = DEMAND_BATCH if demand else PREFETCH
        return self._io.load_batch(layer, ids, protected, MAX_BATCH, origin)

    def _get_many_k3(self, layer: object, raw: list[object]) -> int:
        """Upstream getmany: out-of-range ids skipped, at most 64 reservations, no error."""
        layer = _integer("layer", layer)
        ids = [_integer("ids[]", e) for e in raw]
        if not 0 <= layer < self.n_layers:
            self._acct.c.batch_ids_dropped += len(ids)
            return 0
        kept = [e for e in ids if 0 <= e < self.n_experts]
        self._acct.c.batch_ids_dropped += len(ids) - len(kept)
        return self._io.load_batch(layer, kept, set(), MAX_BATCH)

    def resident(self, layer: int, expert: int) -> ExpertView | None:
        """The view if resident, else None. No counters, no stamp, no trace, no lease."""
        s = self._t.slot_of[self._key(layer, expert)]
        return self._t.views[s] if s >= 0 else None

    def warm(self, layer: int, expert: int) -> bool:
        """Load an expert ahead of demand (upstream k3_cache_prefetch); True if it was read.

        Not a request in the exact counters; compat mode counts a hit or a miss as upstream.
        """
        key = self._key(layer, expert)
        s = self._t.slot_of[key]
        self._acct.warm_request(s >= 0)
        if s >= 0:
            self._t.stamp(s)
            return False
        layer, expert = key // self.n_experts, key % self.n_experts
        self._log.add("warm", layer, expert)
        self._io.admit(layer, expert, WARM)
        return True

    def pin(self, layer: int, expert: int, flag: bool) -> bool:
        """Pin (or unpin) a resident expert; returns whether its pin changed.

        Raises NotResident if it is not resident. Fixed mode keeps topk + 1 slots unpinned.
        """
        key = self._key(layer, expert)
        s = self._t.slot_of[key]
        if s < 0:
            raise NotResident(f"pin: layer {layer} expert {expert} is not resident")
        flag = bool(flag)
        if flag and not self._t.pinned[s] and not self._k3:
            limit = self.n_slots - self.topk - 1
            pinned = sum(self._t.pinned)
            if pinned >= limit:
                raise ParamError(
                    f"pin: at most n_slots - topk - 1 = {limit} slots may be pinned, "
                    f"{pinned} already are"
                )
        changed = self._t.pinned[s] != flag
        self._t.pinned[s] = flag
        self._log.add("pin" if flag else "unpin", layer, expert, s, self._t.origin[s])
        return changed

    def begin_layer(self) -> None:
        """Release every lease: views handed out before this call may now be reused."""
        self._leases.clear()
        self._log.add("lease_clear")

    def reset_stats(self) -> None:
        """Start a new stats window; residency, stamps, pins, hist and trace are kept."""
        self._acct.reset()
        self._log.add("reset")

    def stats(self) -> CacheStats:
        """Upstream figures and exact counters of the current window, plus gauges (frozen)."""
        t = self._t
        return self._acct.stats(
            n_slots=self.n_slots,
            slot_bytes=self.slot_bytes,
            compat=self.compat,
            resident=t.count("READY"),
            inflight=t.count("INFLIGHT"),
            pinned=sum(1 for s in range(self.n_slots) if t.pinned[s]),
            leased=sum(1 for x in t.leases if x),
            trace_dropped=self._trace.dropped,
        )

    def snapshot(self) -> CacheSnapshot:
        """A frozen, read-only picture of every slot, for figures."""
        t, n = self._t, self.n_experts
        slots = []
        for s in range(self.n_slots):
            k = t.key_of[s] if t.key_of[s] >= 0 else t.pending_key[s]
            slots.append(SlotInfo(slot=s, state=t.state(s), layer=k // n if k >= 0 else -1,
                                  expert=k % n if k >= 0 else -1, pinned=t.pinned[s],
                                  origin=t.origin[s], consumed=t.consumed[s],
                                  leased=t.leases[s] > 0, used_at=t.used_at[s],
                                  generation=t.generation[s]))
        return CacheSnapshot(n_slots=self.n_slots, slot_bytes=self.slot_bytes, compat=self.compat,
                             window=self._acct.window, seq=self._log.seq, slots=tuple(slots))

    @property
    def seq(self) -> int:
        """The newest event's sequence number (0 before any): pass it to `events` later to
        read only what happened since."""
        return self._log.seq

    def events(self, since: int = 0) -> tuple[Event, ...]:
        """Logged events with seq > since (the log keeps the last log_capacity)."""
        return self._log.since(check_int("since", since, 0))

    def trace(self) -> np.ndarray:
        """Every in-range get as (layer, expert) int32 pairs in request order: (n, 2)."""
        return self._trace.array()

    def hist(self) -> np.ndarray:
        """Gets per expert: (n_layers, n_experts) int64."""
        return self._hist.copy()

    def close(self) -> None:
        self._io.close()

    def __enter__(self) -> ExpertCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _key(self, layer: int, expert: int) -> int:
        return (_index("layer", layer, self.n_layers) * self.n_experts
                + _index("expert", expert, self.n_experts))

    def _probe(self) -> ExpertRef:
        """Expert 0 of the first layer that resolves (dense layers have none) sizes the slots."""
        problems = []
        for layer in range(self.n_layers):
            try:
                return resolve_expert(self.index, self.layout, layer, 0)
            except ExpertLoadError as e:
                problems.append(str(e))
        raise ExpertLoadError(f"no layer resolves expert 0; first problem: {problems[0]}")
