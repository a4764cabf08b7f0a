"""compare_arms: stock / routing / prefetch / both, closed loop on the tiny model.

Each arm serves `prompt` through core.serve's Engine (the lab's one decode loop; the arm lives
entirely in the Engine's `provider`, a RoutedProvider) with experts streamed through an
ExpertCache of `capacity` slots, then scores held-out text teacher-forced, step by step:
  stock     stock top-k, no prefetch          routing   `route`, no prefetch
  prefetch  stock top-k + `predictor`         both      `route` + `predictor`
Start state: stock decoding of `warmup_bytes` of held-out text leaves a warm cache; with
restore=True every pass (each arm's generation, each arm's scoring) starts from exactly that
state (core.routing.warm_state); restore=False carries the cache over, in the order above (the
feedback loop: each arm inherits what the previous one made resident). The oracle predictor
replays what the same routing used without prefetch (stock for "prefetch", routing for
"both"). `seed` picks the held-out passage; everything else is deterministic, so an arm's
report is the same on every run except its measured times (fields that never compare).
Hit rates, bytes and swaps are the decode's (the prefill's window is kept apart). Modelled
tokens/s under a disk preset (core.routing.disk): measured compute per token (each decode
step's wall time minus the cache's load time in it; the median step, so a busy machine's
preemptions do not decide an A/B), plus demand reads at the preset's speed, plus each
prefetch's lateness: its load time beyond the compute time of the one layer it overlaps.
"""

from __future__ import annotations

import time
from itertools import pairwise
from pathlib import Path

from core.errors import ParamError, check_choice, check_int
from core.experts import CacheStats, ExpertCache
from core.model.model import HybridLM
from core.model.weights import ASSET_DIR, load_model
from core.paging.ledger import toy_geometry
from core.routing.arm_report import ArmReport, Pass, report
from core.routing.config import RouteConfig
from core.routing.policy import RoutePolicy
from core.routing.prefetch import PREDICTORS, Prefetcher, Recording
from core.routing.provider import RoutedProvider
from core.routing.quality import Scored, heldout_text, teacher_forced
from core.routing.warm_state import WarmState, restore, warm_up
from core.serve import Engine

ARMS = ("stock", "routing", "prefetch", "both")
PAGE = 64  # tokens per page of the Engine's pool
__all__ = ["ARMS", "ArmReport", "Pass", "compare_arms"]


def _finish(prov: RoutedProvider, stats: CacheStats, seconds: float,
            step_compute: tuple[float, ...] = ()) -> Pass:
    pre = prov.prefetcher
    if pre is not None:
        pre.close()
    return Pass(stats=stats, prefill=prov.prefill_stats, steps=prov.steps,
                route=prov.policy.cfg.label(), layers=prov.policy.layers("decode"),
                prefetch=pre.meters() if pre is not None else (),
                issues=tuple(pre.issues) if pre is not None else (), seconds=seconds,
                step_compute=step_compute, select_s=prov.policy.seconds["decode"])


class _Arms:
    """The passes of one compare_arms call over one cache (rebuilt or carried over)."""

    def __init__(self, model: HybridLM, directory: Path, capacity: int, route: RouteConfig,
                 predictor: str, start: WarmState, restore_each: bool) -> None:
        self.model, self.directory, self.capacity = model, directory, capacity
        self.route, self.predictor, self.start = route, predictor, start
        self.restore_each = restore_each
        self.cache: ExpertCache | None = None

    def _cache(self) -> ExpertCache:
        """The pass's cache: the start state rebuilt (restore), or the last one carried over."""
        if self.cache is not None and not self.restore_each:
            self.cache.reset_stats()
            return self.cache
        if self.cache is not None:
            self.cache.close()
        self.cache = restore(self.directory, self.model, self.capacity, self.start)
        return self.cache

    def _provider(self, routed: bool, prefetch: bool, future: Recording | None
                  ) -> RoutedProvider:
        d = self.model.dims
        cfg = self.route if routed else RouteConfig("topk", k=d.top_k, J=0, M=d.top_k)
        cache = self._cache()
        pre = Prefetcher(self.predictor, cache, self.model, future=future) if prefetch else None
        return RoutedProvider(cache, RoutePolicy(cfg, d.n_layers), pre)

    def generate(self, prompt: bytes, n_new: int, routed: bool, prefetch: bool,
                 future: Recording | None) -> tuple[bytes, Pass]:
        prov = self._provider(routed, prefetch, future)
        d = self.model.dims
        pages = d.n_mla * -(-(len(prompt) + n_new) // PAGE) + toy_geometry(d, PAGE).kda_pages
        eng = Engine(self.model, pages, tokens_per_page=PAGE, prefix_cache=False, provider=prov)
        try:
            rep = eng.generate(prompt, n_new)
        finally:
            if prov.prefetcher is not None:
                prov.prefetcher.close()
        stats = self.cache.stats()
        marks = [*prov.load_marks, stats.load_seconds]
        compute = tuple(st.seconds - (b - a)
                        for st, (a, b) in zip(rep.steps, pairwise(marks), strict=True))
        return rep.text, _finish(prov, stats, sum(st.seconds for st in rep.steps), compute)

    def score(self, text: bytes, routed: bool, prefetch: bool, future: Recording | None
              ) -> tuple[Scored, Pass]:
        prov = self._provider(routed, prefetch, future)
        t0 = time.perf_counter()
        try:
            scored = teacher_forced(self.model, text, prov)
        finally:
            if prov.prefetcher is not None:
                prov.prefetcher.close()
        return scored, _finish(prov, self.cache.stats(), time.perf_counter() - t0)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


def compare_arms(prompt: bytes, n_new: int, capacity: int, route: RouteConfig,
                 predictor: str = "pilot", seed: int = 0, restore: bool = True, *,
                 model: HybridLM | None = None, directory: str | Path = ASSET_DIR,
                 score_bytes: int = 128, warmup_bytes: int = 64) -> dict[str, ArmReport]:
    """The four arms on the tiny model (see the module docstring) -> {arm: ArmReport}.

    prompt, n_new: what each arm generates through the Engine. capacity: ExpertCache slots.
    route: the routing arms' RouteConfig. predictor: one of PREDICTORS. seed: picks the
    held-out passage (warmup_bytes warm the cache, score_bytes are scored). restore: every
    pass from the warm state (True) or carried over (False). model, directory: the model and
    its shards (default: the shipped model in assets/model).
    """
    if not isinstance(prompt, bytes) or not prompt:
        raise ParamError(f"prompt must be non-empty bytes, got {prompt!r}")
    n_new = check_int("n_new", n_new, 1, 4096)
    if not isinstance(route, RouteConfig):
        raise ParamError(f"route must be a RouteConfig, got {type(route).__name__}")
    check_choice("predictor", predictor, PREDICTORS)
    if not isinstance(restore, bool):
        raise ParamError(f"restore must be a bool, got {restore!r}")
    model = model if model is not None else load_model(directory)
    d = model.dims
    capacity = check_int("capacity", capacity, d.top_k + 1, d.n_layers * d.n_experts)
    route.check_experts(d.n_experts)
    text = heldout_text(seed, check_int("warmup_bytes", warmup_bytes, 2)
                        + check_int("score_bytes", score_bytes, 2))
    warm, scored_text = text[:warmup_bytes], text[warmup_bytes:]
    start = warm_up(directory, model, capacity, warm)
    stock_ref = teacher_forced(model, scored_text)  # all resident: placement cannot matter
    arms = _Arms(model, Path(directory), capacity, route, predictor, start, restore)
    plans = {"stock": (False, False, None), "routing": (True, False, None),
             "prefetch": (False, True, "stock"), "both": (True, True, "routing")}
    runs: dict[str, tuple] = {}
    try:
        for arm, (routed, prefetch, oracle_of) in plans.items():
            gen_future = runs[oracle_of][1].steps if oracle_of else None
            tf_future = runs[oracle_of][3].steps if oracle_of else None
            text_out, gen = arms.generate(prompt, n_new, routed, prefetch, gen_future)
            tf, tf_pass = arms.score(scored_text, routed, prefetch, tf_future)
            runs[arm] = (text_out, gen, tf, tf_pass)
    finally:
        arms.close()
    stock_text = runs["stock"][0]
    return {arm: report(arm, predictor if arm in ("prefetch", "both") else None, text_out,
                        stock_text, gen, tf, tf_pass, stock_ref, d.n_layers)
            for arm, (text_out, gen, tf, tf_pass) in runs.items()}
