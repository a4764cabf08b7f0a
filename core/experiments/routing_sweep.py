"""The Cache-aware routing tab's precomputed sweep: every setting of its controls
(routing_grid.py), scored closed loop, per capacity.

`python -m core.experiments.routing_sweep [--capacity C ...]` rebuilds
assets/routing/sweep_c<C>.json (about 100 scored passes of 255 decode steps per capacity: about
an hour per capacity on a busy core; capacities can be built in parallel with one --capacity
each). The tab only reads these files, so a redraw costs no model run;
tests/core/experiments/test_routing_sweep.py recomputes a sample and compares it exactly.

Per capacity (CAPACITY_FRACTIONS of all experts, every pass from the same warm state: stock
decoding of WARMUP_BYTES of held-out text, core.routing.warm_state), over SCORE_BYTES of held-out
text (seed SEED), teacher-forced one byte at a time (core.routing.record.run_pass):
  stock     stock top-k, no prefetch; its requests give the LRU replay (the oracle: equal to
            the live hits) and the Belady ceiling (core.routing.ceiling)
  prefetch  stock top-k with each predictor (previous, pilot, oracle)
  routing   every routed setting of the tab's controls (grid_routes), no prefetch
  both      the same settings with PILOT prefetch
  moment    the router scores and residency of one decode step and layer of the stock pass
            (the first where the default setting takes a resident expert from rank 3 or
            deeper while both true top-k are cold; else the first where it substitutes): the
            rank strip's input
Each pass keeps the heatmap's cells for its first CELL_STEPS steps only.
A file records the model's fingerprint; a sweep made for other weights is refused on load.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import torch

from core.errors import ParamError, check_int
from core.experiments.routing_grid import DEFAULT, capacities, grid_routes, stock_route, tab_route
from core.model.config import ModelDims
from core.model.manifest import ASSET_DIR, fingerprint
from core.model.model import HybridLM
from core.model.weights import load_model
from core.routing.ceiling import replay_hits
from core.routing.config import RouteConfig
from core.routing.prefetch import PREDICTORS
from core.routing.quality import heldout_text, teacher_forced
from core.routing.record import PassRecord, PassRun, run_pass
from core.routing.select import select_experts
from core.routing.warm_state import warm_up

SWEEP_DIR = Path(__file__).resolve().parents[2] / "assets" / "routing"
SEED, WARMUP_BYTES, SCORE_BYTES = 0, 64, 256  # 255 scored positions: the model's context
CELL_STEPS = 96  # decode steps whose cells (the heatmap) are kept
PILOT = "pilot"


@dataclass(frozen=True, kw_only=True)
class Moment:
    step: int
    layer: int
    scores: tuple[float, ...]  # [E] router probabilities (float32 values)
    resident: tuple[bool, ...]  # [E] residency snapshot the selection read


@dataclass(frozen=True, kw_only=True)
class CapacitySweep:
    capacity: int
    n_experts_total: int
    fingerprint: str
    text: dict[str, int]  # seed, warmup_bytes, score_bytes, cell_steps
    stock: PassRecord
    prefetch: dict[str, PassRecord]  # predictor -> pass
    routing: dict[str, PassRecord]  # route label -> pass
    both: dict[str, PassRecord]  # route label -> pass with PILOT
    replay: dict[str, int]  # requests, lru (hits), belady (hits)
    moment: Moment

    def arms(self, route: RouteConfig) -> dict[str, PassRecord]:
        """The four arms at one setting: stock, routing, prefetch (PILOT), both."""
        if route.stock:
            return {"stock": self.stock, "routing": self.stock,
                    "prefetch": self.prefetch[PILOT], "both": self.prefetch[PILOT]}
        key = route.label()
        if key not in self.routing:
            raise ParamError(f"the sweep has no setting {key!r}; rebuild: python -m "
                             f"core.experiments.routing_sweep")
        return {"stock": self.stock, "routing": self.routing[key],
                "prefetch": self.prefetch[PILOT], "both": self.both[key]}

    @property
    def belady_rate(self) -> float:
        return self.replay["belady"] / self.replay["requests"]

    def to_json(self) -> dict:
        m = self.moment
        return {
            "capacity": self.capacity, "n_experts_total": self.n_experts_total,
            "fingerprint": self.fingerprint, "text": self.text,
            "stock": self.stock.to_json(),
            "prefetch": {p: r.to_json() for p, r in self.prefetch.items()},
            "routing": {k: r.to_json() for k, r in self.routing.items()},
            "both": {k: r.to_json() for k, r in self.both.items()},
            "replay": self.replay,
            "moment": {"step": m.step, "layer": m.layer, "scores": list(m.scores),
                       "resident": list(m.resident)},
        }

    @classmethod
    def from_json(cls, d: dict) -> CapacitySweep:
        m = d["moment"]
        return cls(
            capacity=d["capacity"], n_experts_total=d["n_experts_total"],
            fingerprint=d["fingerprint"], text=d["text"],
            stock=PassRecord.from_json(d["stock"]),
            prefetch={p: PassRecord.from_json(r) for p, r in d["prefetch"].items()},
            routing={k: PassRecord.from_json(r) for k, r in d["routing"].items()},
            both={k: PassRecord.from_json(r) for k, r in d["both"].items()},
            replay=d["replay"],
            moment=Moment(step=m["step"], layer=m["layer"], scores=tuple(m["scores"]),
                          resident=tuple(m["resident"])))


def texts(seed: int = SEED) -> tuple[bytes, bytes]:
    """(warm-up text, scored text): one held-out passage, split."""
    t = heldout_text(seed, WARMUP_BYTES + SCORE_BYTES)
    return t[:WARMUP_BYTES], t[WARMUP_BYTES:]


def pick_moment(run: PassRun, d: ModelDims) -> Moment:
    """The rank strip's step and layer (module docstring), from a stock pass's record."""
    cfg = tab_route(DEFAULT["method"], DEFAULT["M"], DEFAULT["J"], DEFAULT["alpha"], d)
    k, L = d.top_k, d.n_layers
    steps = run.scores.shape[0]
    fallback = None
    for t in range(steps):
        for layer in range(L):
            s = run.scores[t, layer][None]  # [1, E]
            res = run.residency[t * L + layer]  # [E]
            sel = select_experts(s, res, cfg)
            if not int(sel.swaps[0]):
                continue
            order = torch.sort(s[0], descending=True, stable=True).indices
            rank = {int(e): r for r, e in enumerate(order)}
            deep = max(rank[int(e)] for e in sel.ids[0])
            cold_top = not bool(res[order[:k]].any())
            moment = Moment(step=t, layer=layer, scores=tuple(float(x) for x in s[0]),
                            resident=tuple(bool(x) for x in res))
            if deep >= 3 and cold_top:
                return moment
            fallback = fallback or moment
    if fallback is None:
        raise RuntimeError("the default setting never substitutes in the stock pass")
    return fallback


def build_capacity(capacity: int, model: HybridLM | None = None,
                   directory: str | Path = ASSET_DIR, routes: tuple[RouteConfig, ...] | None
                   = None, log=print) -> CapacitySweep:
    """Every pass at one capacity (module docstring). routes: a subset (tests); default all."""
    model = model if model is not None else load_model(directory)
    d = model.dims
    check_int("capacity", capacity, d.top_k + 1, d.n_layers * d.n_experts)
    warm, scored = texts()
    start = warm_up(directory, model, capacity, warm)
    ref = teacher_forced(model, scored)  # all resident: placement cannot matter

    def scored_pass(route: RouteConfig, predictor: str | None = None, **kw) -> PassRun:
        return run_pass(model, directory, capacity, start, scored, route, ref,
                        predictor=predictor, cell_steps=CELL_STEPS, **kw)

    stock_run = scored_pass(stock_route(d), keep_residency=True)
    prefetch = {}
    for p in PREDICTORS:
        prefetch[p] = scored_pass(stock_route(d), p, future=stock_run.steps).record
        log(f"  capacity {capacity}: prefetch {p}")
    routing, both = {}, {}
    todo = grid_routes(d) if routes is None else routes
    for i, cfg in enumerate(todo):
        key = cfg.label()
        routing[key] = scored_pass(cfg).record
        both[key] = scored_pass(cfg, PILOT).record
        log(f"  capacity {capacity}: {i + 1}/{len(todo)} {key}")
    reqs = stock_run.requests
    replay = {"requests": len(reqs),
              "lru": replay_hits(start, reqs, capacity, d.top_k, "lru"),
              "belady": replay_hits(start, reqs, capacity, d.top_k, "belady")}
    return CapacitySweep(
        capacity=capacity, n_experts_total=d.n_layers * d.n_experts,
        fingerprint=fingerprint(directory),
        text={"seed": SEED, "warmup_bytes": WARMUP_BYTES, "score_bytes": SCORE_BYTES,
              "cell_steps": CELL_STEPS},
        stock=stock_run.record, prefetch=prefetch, routing=routing, both=both, replay=replay,
        moment=pick_moment(stock_run, d))


def path_of(capacity: int, directory: Path = SWEEP_DIR) -> Path:
    return directory / f"sweep_c{capacity}.json"


def save(sweep: CapacitySweep, directory: Path = SWEEP_DIR) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    p = path_of(sweep.capacity, directory)
    p.write_text(json.dumps(sweep.to_json(), separators=(",", ":")) + "\n")
    return p


def load(capacity: int, directory: Path = SWEEP_DIR, model_dir: str | Path = ASSET_DIR
         ) -> CapacitySweep:
    """The sweep at one capacity; refuses one made for other weights."""
    p = path_of(capacity, directory)
    if not p.exists():
        raise FileNotFoundError(f"{p} is missing: run python -m core.experiments.routing_sweep")
    sweep = CapacitySweep.from_json(json.loads(p.read_text()))
    if sweep.fingerprint != fingerprint(model_dir):
        raise RuntimeError(f"{p} was made for other model weights: run python -m "
                           f"core.experiments.routing_sweep")
    return sweep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m core.experiments.routing_sweep",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--capacity", type=int, action="append",
                    help="only this capacity (repeatable); default: every one")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    model = load_model()
    for cap in a.capacity or capacities(model.dims):
        print(f"capacity {cap}: building", flush=True)
        p = save(build_capacity(cap, model, log=lambda s: print(s, flush=True)))
        print(f"capacity {cap}: wrote {p}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
