"""Serving Lab engine: torch / numpy / safetensors only (never gradio or matplotlib).

One package per subsystem; only dependency-free leaves sit at the top:
  errors.py       ParamError and the check_* helpers (bad input names the parameter and range)
  tolerances.py   named tolerances and max_abs, shared by tests and the figures' live checks
  dims.py         KDA head geometry and Kimi K3 at checkpoint scale (one source of truth)
  kda/            the KDA recurrence, its chunked fast path, gates, the fla reference loader
  spec/           speculative decoding: draft replay, rollback byte model, rings, sessions
  experts/        streaming MoE expert cache over safetensors shards, policy replay
  model/          the tiny hybrid KDA/MLA MoE model, its weights, corpus, training and traces
  routing/        cache-aware expert selection, meters, next-layer prefetch, the four-arm loop
  paging/         one page pool for MLA latents and KDA state, pack/unpack, the memory ledger
  prefix/         chained block hashes, atomic KDA checkpoint groups, the two-stage lookup
  serve/          Engine: the model served over pages with prefix reuse
  fleet/          consistent hashing, per-class budgets, routers, the fleet simulator
  bench/          `python -m core.bench NAME`
"""
