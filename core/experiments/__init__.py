"""The experiments the tabs run on the engine's mechanisms: the middle of the three layers
(mechanisms in core/<subsystem>, experiments here, figures and wiring in tabs/).

What lives here: for each tab, the runs its figures draw, as pure functions of the tab's
controls (plain values in, a frozen keyword-only record or read-only array out), cached per
parameter set with flight.py's @single_flight (one computation serves every concurrent caller;
`f.ready(*args)` says whether it is cached, which the app's background warm-up reads). Also the
scenes and grids they run over, and the few measurements a tab's live panel takes now (never
cached, never on a figure). No gradio, no matplotlib, no drawing, no words for a student beyond
a record's own description; mechanisms stay in their subsystem (an experiment composes them),
and a module here imports only mechanisms and other experiments.

Torch-free at import, so that the tabs declare their controls with them before torch loads:
scenes.py, routing_grid.py, expert_cache.py, fleet_ring.py, fleet_sim.py (numpy at most).

  flight.py          SingleFlight and @single_flight: a bounded LRU cache in which one
                     computation serves every concurrent caller of a key
  shipped.py         the shipped model, its routing trace and training record, loaded once
  scenes.py          the prompts, sizes and ranges the experiments run over (torch-free)
  overview.py        Overview: one request's path through the whole lab (RequestPath)
  overview_drafts.py Overview: the same request with drafts that are always right
  model.py           Model: a greedy sample per domain, routing's domain information
  prefix.py          Prefix cache: the four presets on a real Engine (PresetRun), time saved
  prefix_spacing.py  Prefix cache: checkpoint spacing vs reusable tokens (SpacingSweep)
  prefix_partial.py  Prefix cache: a trusted partial group's error against the distance past
                     its boundary (PartialCurve)
  paging.py          Page pool: page growth, the model's state stored in pages and packed
  expert_cache.py    Expert cache: a scripted ExpertCache run (ScenarioRun)
  cache_policies.py  Cache policies: LRU / LFU / Belady on synthetic and recorded routing
  routing_grid.py    Cache-aware routing: every setting its controls reach (torch-free)
  routing_sweep.py   Cache-aware routing: the precomputed closed-loop sweep
                     (`python -m core.experiments.routing_sweep`; assets/routing)
  routing.py         Cache-aware routing: a setting read from the sweep, the frontier's points,
                     one decode step timed now
  routing_pilot.py   Cache-aware routing: PILOT's recall per layer against how close the
                     stream it taps is to the router's real input (PilotAlignment)
  engine.py          Engine: speculative decoding pass by pass (SpecRun, SpecSweep), the
                     speedup measured now
  speculation.py     Engine: why speculation pays, weight bytes a verify pass reads per byte
                     it writes, and the verify tax (experts per layer against the window)
  kda_replay.py      KDA replay: the cost model under the tab's convention, replay checks
  replay_ring.py     Replay ring: one speculative session through the raw-input ring
  serve.py           Serve: sessions and runs of ServeSession from the tab's controls
  fleet_ring.py      Fleet ring: the ring's layout and routes, bounded-load sweeps
  fleet_sim.py       Fleet budgets and simulation: the budget and failover scenes, the
                     capacity sweep

Oracles: each experiment's tests (tests/core/experiments) check it against the mechanisms'
own oracles (a prefix hit against a cold forward, speculative text against plain greedy, the
sweep's sample recomputed exactly, ...); tests/lessons checks every number the lessons quote.
"""
