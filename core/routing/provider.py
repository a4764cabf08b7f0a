"""RoutedProvider: the closed loop's ExpertProvider (a CacheProvider plus routing, prefetch,
phases and a record of what every decode step used).

It is what core.serve's Engine receives as `provider`, so the Engine's one decode loop runs
the arms unchanged. On top of CacheProvider (demand batches through an ExpertCache):
  policy      a RoutePolicy (None: stock top-k, the MoE's own code path)
  prefetcher  a Prefetcher, driven by the MoE's routed/consumed hooks (None: no prefetch)
  phases      the cache's stats window is closed when the first decode token (a call with
              one row) reaches layer 0: `prefill_stats` keeps the prefill's window and the
              cache's current window is the decode's from then on
  steps       the experts every decode step used per layer (a Recording: the oracle's input)
  load_marks  the cache's load seconds (its window) as each decode step reached layer 0, so a
              step's own load time is the difference to the next mark
"""

from __future__ import annotations

from core.experts import CacheStats, ExpertCache
from core.model.providers import CacheProvider
from core.model.router import Routing
from core.routing.policy import RoutePolicy
from core.routing.prefetch import Prefetcher, Recording


class RoutedProvider(CacheProvider):
    def __init__(self, cache: ExpertCache, policy: RoutePolicy | None = None,
                 prefetcher: Prefetcher | None = None) -> None:
        super().__init__(cache, policy)
        self.prefetcher = prefetcher
        self.phase = "prefill"
        self.prefill_stats: CacheStats | None = None
        self.steps: Recording = []
        self.load_marks: list[float] = []

    def routed(self, layer: int, routing: Routing) -> None:
        if routing.ids.shape[0] == 1:
            if layer == 0:
                if self.phase == "prefill":
                    self.prefill_stats = self.cache.stats()
                    self.cache.reset_stats()
                    self.phase = "decode"
                self.steps.append([])
                self.load_marks.append(self.cache.stats().load_seconds)
            self.steps[-1].append(tuple(routing.ids[0].tolist()))
        if self.prefetcher is not None:
            self.prefetcher.observe(len(self.steps) - 1, layer, routing)

    def consumed(self, layer: int, routing: Routing) -> None:
        if self.prefetcher is not None:
            self.prefetcher.after(len(self.steps) - 1, layer, routing)
