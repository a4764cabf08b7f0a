"""One scored pass, recorded cell by cell: what the tab's heatmap, frontier and arm panels draw.

`run_pass` teacher-forces held-out text through the model one byte at a time (the closed
loop: a swap changes the hidden state, which changes later routing) with experts streamed
through an ExpertCache rebuilt from a warm state, under one routing and optionally one
prefetch predictor, and returns a PassRecord of plain numbers (JSON-ready, no live objects).

Per cell (decode step, layer), from the cache's own event log, drained after each layer:
  resident   gets of the layer's k experts that found them resident (not loaded ahead)
  prefetched gets that found them loaded ahead by a prefetch (first use)
  substitute the routing chose at least one expert outside the true top-k (Selection.swaps)
  wasted     a prefetch issued for this cell was evicted before any get used it
A cell is one character of CELL_ALPHABET (k <= 3), so a layer's row is a string.
Totals are the cache's counters (CacheStats) and the policy's meters (core.routing.meters).
Prefetch issues are kept as a histogram {reads per issue: [issues, device bytes]}, enough to
model each issue's lateness under a disk preset.
"""

from __future__ import annotations

import string
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np
import torch

from core.errors import ParamError
from core.experts import ExpertCache
from core.model.model import HybridLM
from core.model.router import Routing
from core.routing.config import RouteConfig
from core.routing.meters import combine
from core.routing.policy import RoutePolicy
from core.routing.prefetch import Prefetcher, Recording
from core.routing.provider import RoutedProvider
from core.routing.quality import Scored, compare, teacher_forced
from core.routing.warm_state import WarmState, restore

CELL_ALPHABET = string.digits + string.ascii_uppercase + string.ascii_lowercase + "+/"


def _base(k: int) -> int:
    n = k + 1
    if 4 * n * n > len(CELL_ALPHABET):
        raise ParamError(f"k must be in [1, 3] for one character per cell, got {k}")
    return n


def cell_code(resident: int, prefetched: int, substitute: bool, wasted: bool, k: int) -> str:
    """One cell as a character: resident + (k+1) prefetched + (k+1)^2 (substitute + 2 wasted)."""
    n = _base(k)
    return CELL_ALPHABET[resident + n * prefetched + n * n * (int(substitute) + 2 * int(wasted))]


def cell_fields(c: str, k: int) -> tuple[int, int, bool, bool]:
    """The inverse of cell_code: (resident, prefetched, substitute, wasted)."""
    n = _base(k)
    flags, rest = divmod(CELL_ALPHABET.index(c), n * n)
    return rest % n, rest // n, bool(flags & 1), bool(flags & 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class PassRecord:
    route: str  # the routing's label (RouteConfig.label)
    predictor: str | None  # None: no prefetch
    positions: int  # scored positions (text bytes - 1): decode steps
    requests: int  # expert gets
    hit_resident: int
    hit_prefetched: int
    miss: int
    demand_reads: int
    demand_bytes: int  # device bytes of demand reads
    prefetch_reads: int
    prefetch_bytes: int  # device bytes of prefetch reads
    wasted: int  # prefetched experts evicted before any use
    wasted_bytes: int
    issues: dict[str, list[int]]  # reads per prefetch issue -> [issues, device bytes]
    swaps: int  # slots given to an expert outside the true top-k
    slots: int
    kl: float  # mean per row and layer, 1e-6 floor
    kl_colibri: float  # 1e-12 floor
    dropped_mass: float
    l1_shift: float
    nll: float  # nats per byte
    delta_nll: float  # minus stock's, same text
    nll_se: float  # standard error of delta_nll: std of the per-position differences / sqrt(n)
    greedy_agree: float
    first_divergence: int | None  # first position whose argmax differs from stock's
    layer_hits: list[int]  # per layer: gets that hit (resident + prefetched)
    layer_requests: list[int]
    layer_swaps: list[int]
    layer_prefetch: list[list[int]]  # per layer: PrefetchMeters fields ([] without prefetch)
    cells: list[str]  # per layer: one character per decode step (cell_code), the first steps

    @property
    def hit_rate(self) -> float:
        return (self.hit_resident + self.hit_prefetched) / self.requests

    @property
    def swap_rate(self) -> float:
        return self.swaps / self.slots

    @property
    def agree(self) -> float:
        """= 1 - swap_rate, exactly."""
        return 1.0 - self.swap_rate

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> PassRecord:
        names = {f.name for f in fields(cls)}
        if set(d) != names:
            raise ValueError(f"a PassRecord needs exactly {sorted(names)}, got {sorted(d)}")
        return cls(**d)


class RecordingProvider(RoutedProvider):
    """RoutedProvider that also classifies every get, prefetch and waste per (step, layer)."""

    def __init__(self, cache: ExpertCache, policy: RoutePolicy, prefetcher: Prefetcher | None,
                 keep_residency: bool = False) -> None:
        super().__init__(cache, policy, prefetcher)
        self.n_layers = policy.n_layers
        self.counts: list[list[list[int]]] = []  # [step][layer] -> [resident, prefetched, waste]
        self.residency: list[torch.Tensor] | None = [] if keep_residency else None
        self._issued: dict[tuple[int, int], tuple[int, int]] = {}  # key -> (step, layer)
        self._seq = cache.seq

    def resident(self, layer: int, n_experts: int) -> torch.Tensor:
        snap = super().resident(layer, n_experts)
        if self.residency is not None:
            self.residency.append(snap)
        return snap

    def routed(self, layer: int, routing: Routing) -> None:
        if layer == 0 and routing.ids.shape[0] == 1:
            self.drain()  # the previous step's events
            self.counts.append([[0, 0, 0] for _ in range(self.n_layers)])
        super().routed(layer, routing)

    def drain(self) -> None:
        """Classify the cache's events since the last drain (all of one decode step: far fewer
        than the log keeps) into the current step's cells."""
        events = self.cache.events(self._seq)
        if events and events[0].seq != self._seq + 1:
            raise RuntimeError("the cache's event log dropped events before they were read")
        step = len(self.counts) - 1
        for ev in events:
            self._seq = ev.seq
            if step < 0:
                continue
            if ev.op in ("hit_resident", "hit_prefetched"):
                self.counts[step][ev.layer][0 if ev.op == "hit_resident" else 1] += 1
            elif ev.op == "publish" and ev.origin == "prefetch":
                self._issued[(ev.layer, ev.expert)] = (step, ev.layer)
            elif ev.op == "waste" and (ev.layer, ev.expert) in self._issued:
                s, lay = self._issued.pop((ev.layer, ev.expert))
                self.counts[s][lay][2] += 1


@dataclass(frozen=True, slots=True, kw_only=True)
class PassRun:
    record: PassRecord
    scored: Scored
    steps: Recording  # the experts each step used, per layer (an oracle's future)
    requests: list[tuple[int, int]]  # every get, in order (the ceiling replays these)
    residency: list[torch.Tensor] | None  # [step * n_layers + layer] -> bool [E]
    scores: torch.Tensor  # [steps, n_layers, E] router scores


def _issues(issues: list[tuple[int, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for reads, nbytes in issues:
        row = out.setdefault(str(reads), [0, 0])
        row[0] += 1
        row[1] += nbytes
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


@torch.no_grad()
def run_pass(model: HybridLM, directory: str | Path, capacity: int, start: WarmState,
             text: bytes, route: RouteConfig, stock: Scored | None = None,
             predictor: str | None = None, future: Recording | None = None,
             keep_residency: bool = False, cell_steps: int | None = None) -> PassRun:
    """Teacher-force `text` from the warm `start` under `route` (+ `predictor`), recorded.

    stock: the stock pass over the same text (None: this pass is its own reference, so
    delta_nll is 0). future: the oracle predictor's recording. cell_steps: keep the cells of
    the first steps only (None: all).
    """
    d = model.dims
    k, L = d.top_k, d.n_layers
    cache = restore(directory, model, capacity, start)
    n0 = len(cache.trace())
    policy = RoutePolicy(route, L)
    pre = Prefetcher(predictor, cache, model, future=future) if predictor else None
    prov = RecordingProvider(cache, policy, pre, keep_residency)
    try:
        scored = teacher_forced(model, text, prov)
        prov.drain()
        pf = pre.meters() if pre is not None else ()
    finally:
        if pre is not None:
            pre.close()
    s = cache.stats()
    requests = [tuple(map(int, r)) for r in cache.trace()[n0:]]
    cache.close()
    issues = list(pre.issues) if pre is not None else []
    p_bytes = sum(b for _, b in issues)
    layers = policy.layers("decode")
    meters = combine(layers)
    swaps = np.zeros((len(prov.counts), L), np.int64)  # [step, layer]
    score_rows = []
    for layer in range(L):
        sc, sel = policy.selections(layer, "decode")
        swaps[:, layer] = sel.swaps.numpy()
        score_rows.append(sc)
    kept = prov.counts[:cell_steps]
    cells = ["".join(cell_code(c[layer][0], c[layer][1], bool(swaps[t, layer]),
                               c[layer][2] > 0, k) for t, c in enumerate(kept))
             for layer in range(L)]
    ref = stock if stock is not None else scored
    q = compare(scored, ref)
    diff = scored.nll - ref.nll  # [T - 1]
    hits = np.array([[c[layer][0] + c[layer][1] for layer in range(L)] for c in prov.counts])
    rec = PassRecord(
        route=route.label(), predictor=predictor, positions=len(scored.nll),
        requests=s.demand_requests, hit_resident=s.hits_resident,
        hit_prefetched=s.hits_prefetched, miss=s.demand_misses,
        demand_reads=s.demand_reads + s.demand_batch_reads, demand_bytes=s.device_bytes - p_bytes,
        prefetch_reads=sum(r for r, _ in issues), prefetch_bytes=p_bytes,
        wasted=s.prefetch_wasted, wasted_bytes=s.wasted_bytes, issues=_issues(issues),
        swaps=meters.swaps, slots=meters.slots, kl=meters.kl, kl_colibri=meters.kl_colibri,
        dropped_mass=meters.dropped_mass, l1_shift=meters.l1_shift,
        nll=scored.nll_per_byte, delta_nll=q.delta_nll,
        nll_se=float(diff.std() / np.sqrt(len(diff))), greedy_agree=q.greedy_agree,
        first_divergence=q.first_divergence,
        layer_hits=[int(x) for x in hits.sum(0)], layer_requests=[m.slots for m in layers],
        layer_swaps=[m.swaps for m in layers],
        layer_prefetch=[[getattr(m, f.name) for f in fields(m)] for m in pf],
        cells=cells)
    scores = torch.stack(score_rows, 1) if score_rows and score_rows[0].numel() else \
        torch.zeros(0, L, d.n_experts)
    return PassRun(record=rec, scored=scored, steps=prov.steps, requests=requests,
                   residency=prov.residency, scores=scores)
