"""Tab: Fleet ring. Consistent hashing with vnodes: skew, minimal perturbation, bounded loads."""

from __future__ import annotations

from tabs.controls import Slider
from tabs.spec import FigureSpec, Preset, TabSpec

RING = ("vnodes", "clusters", "sessions", "seed")
BOUNDED = ("vnodes", "clusters", "c", "seed")

TAB = TabSpec(
    id="fleet_ring",
    title="Fleet ring",
    controls=(
        Slider(name="vnodes", label="Virtual nodes per cluster V", minimum=1, maximum=256, value=8,
               demo=128, info="The hero: start at 8, slide up and watch the arcs even out."),
        Slider(name="clusters", label="Clusters N", minimum=2, maximum=16, value=8, demo=12),
        Slider(name="c", label="Bounded-load capacity factor c", minimum=1.0, maximum=2.0,
               value=1.25, step=0.05, integer=False, demo=1.5,
               info="Each cluster takes at most ⌈c · mean⌉ keys."),
        Slider(name="sessions", label="Sessions routed S", minimum=600, maximum=40_000,
               value=40_000, step=200, demo=600,
               info="At 600 sessions the sampling noise hides the ring's own skew."),
        Slider(name="seed", label="Ring draw and Zipf seed", minimum=0, maximum=99, value=0, demo=7,
               info="Draw 0 is the simulator's ring; other draws rename the clusters."),
    ),
    figures=(
        FigureSpec("fleet_ring_layout", "Ring layout and keyspace share per cluster",
                   "tabs.fleet_ring.layout:fleet_ring_layout", RING),
        FigureSpec("fleet_ring_spread", "Load skew against vnodes: the 1/√V rule",
                   "tabs.fleet_ring.spread:fleet_ring_spread", RING),
        FigureSpec("fleet_ring_removal", "Removing a cluster: only its sessions move",
                   "tabs.fleet_ring.removal:fleet_ring_removal", RING),
        FigureSpec("fleet_ring_bounded", "Bounded loads: no cluster above the cap",
                   "tabs.fleet_ring.bounded:fleet_ring_bounded", BOUNDED),
        FigureSpec("fleet_ring_bounded_tradeoff", "Bounded loads: balance against affinity",
                   "tabs.fleet_ring.bounded:fleet_ring_bounded_tradeoff", BOUNDED),
    ),
    presets=(
        Preset("One point per cluster", "No virtual nodes: the arcs, and the loads, are very "
               "uneven.", {"vnodes": 1}),
        Preset("Many virtual nodes", "Each cluster at many points: the loads even out, as "
               "1 over the square root of V predicts.", {"vnodes": 256}),
        Preset("A tight bound", "Bounded loads with c close to 1: no cluster may carry much "
               "more than its share; watch the hottest cluster.", {"c": 1.05}),
    ),
)
