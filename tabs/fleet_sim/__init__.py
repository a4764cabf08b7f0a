"""Tab: Fleet budgets and simulation. Class budgets measured honestly, capacity against offered
load, failover, router bake-off."""

from __future__ import annotations

from core.experiments.fleet_sim import AT_MAX, FAIL_AT, SEED
from core.fleet.routers import ROUTERS
from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, Preset, TabSpec

FLEET = ("rate", "fail_at", "router", "seed")
CURSOR = (*FLEET, "at_s")

TAB = TabSpec(
    id="fleet_sim",
    title="Fleet sim",
    controls=(
        Slider(name="long_burst", label="Long-burst size (long requests in 10-20 s)", minimum=20,
               maximum=400, value=120, step=20, demo=240,
               info="The hero: double the burst. Without a cap, short TTFTs explode."),
        Slider(name="long_budget", label="Long-class budget (weight units; a long request holds 3)",
               minimum=3, maximum=96, value=24, step=3, demo=48,
               info="A concurrency cap: 24 units = 8 long requests in flight."),
        Slider(name="rate", label="Arrival rate (requests / s)", minimum=20, maximum=80, value=60,
               step=5, demo=80),
        Slider(name="fail_at", label="Cluster c0 fails at (s); rejoins cold 15 s later", minimum=5,
               maximum=30, value=FAIL_AT, demo=20),
        Choice("router", "Router (timeline; highlighted elsewhere)", ROUTERS, "ring",
               demo="least_loaded"),
        Slider(name="seed", label="Trace seed", minimum=0, maximum=99, value=SEED, demo=3),
        Slider(name="at_s", label="Time cursor (s): show the failover up to here", minimum=0,
               maximum=AT_MAX, value=AT_MAX, demo=20,
               info="Step through the failure; the load figure shows each cluster "
               "at the cursor. The maximum shows the whole run."),
    ),
    more=("seed",),
    figures=(
        FigureSpec("fleet_sim_budgets", "Class budgets under a long burst: right vs wrong metrics",
                   "tabs.fleet_sim.budgets:fleet_sim_budgets",
                   ("long_burst", "long_budget", "seed")),
        FigureSpec("fleet_sim_capacity",
                   "Capacity: goodput vs offered load per router, with and without the failure",
                   "tabs.fleet_sim.capacity:fleet_sim_capacity", ("rate", "router")),
        FigureSpec("fleet_sim_timeline", "Failover timeline: TTFT of every request",
                   "tabs.fleet_sim.timeline:fleet_sim_timeline", CURSOR),
        FigureSpec("fleet_sim_load", "Failover: requests outstanding per cluster, and at the "
                   "cursor", "tabs.fleet_sim.load:fleet_sim_load", CURSOR),
        FigureSpec("fleet_sim_bakeoff", "Router bake-off: hit rate vs P95 TTFT, load CV",
                   "tabs.fleet_sim.bakeoff:fleet_sim_bakeoff", FLEET),
    ),
    stepper="at_s",
    presets=(
        Preset("Overload, cache-blind", "The highest arrival rate with least-loaded routing: "
               "watch it saturate even before the failure.",
               {"rate": 80, "router": "least_loaded"}),
        Preset("Overload, cache-aware", "The same load routed by the ring: prefix hits cut "
               "the prefill work; compare its goodput with least-loaded's.",
               {"rate": 80, "router": "ring"}),
        Preset("A tiny long-request budget", "Long requests beyond a small budget are "
               "rejected or queued: watch the short requests' latency.",
               {"long_budget": 3, "long_burst": 400}),
        Preset("Step through the failure", "The cursor just after c0 fails: move it right "
               "and watch its requests move and the other clusters fill.",
               {"at_s": FAIL_AT + 2}),
    ),
)
