"""Serving Lab engine: torch / numpy / safetensors only (never gradio or matplotlib).

One package per subsystem; only dependency-free leaves sit at the top:
  errors.py       ParamError and the check_* helpers (bad input names the parameter and range)
  tolerances.py   named tolerances and max_abs, shared by tests and the figures' live checks
  dims.py         KDA head geometry and Kimi K3 at checkpoint scale (one source of truth)
  kda/            the KDA recurrence, its chunked fast path, gates, the fla reference loader
  spec/           speculative decoding: draft replay, rollback byte model, rings, sessions
  experts/        streaming MoE expert cache over safetensors shards, policy replay
  model/          the tiny hybrid KDA/MLA MoE model, its weights, training and traces
  fleet/          consistent hashing, per-class budgets, routers, the fleet simulator
  bench/          `python -m core.bench NAME`
"""
