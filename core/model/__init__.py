"""A tiny Kimi-Linear-like hybrid KDA/MLA mixture-of-experts language model over bytes.

What it is: 3 KDA layers then 1 MLA layer, repeated; every layer's FFN is a mixture of routed
top-k experts plus one shared expert. The routed experts live in safetensors shards and can
stream through core.experts.ExpertCache, which is what the serving subsystems measure.

Modules
  config    ModelDims: every dimension, parameter and byte ledgers (K3's are in core.dims)
  corpus    the training corpus per domain (records, split and streams in corpus_documents),
            unigram / bigram baselines
  layers    RMSNorm, the KDA mixer (core.kda), the MLA mixer (prefill and one-token step)
  moe       router (softmax scores), top-k, shared expert; experts come from a provider
  router    Routing (one layer's choice) and SelectionPolicy, shared by moe and providers
  providers ExpertProvider: AllResident, CacheProvider (ExpertCache over the shards)
  model     HybridLM: prefill, step (explicit DecodeState), greedy generate
  manifest  the manifest without torch: ASSET_DIR, dims (shipped_dims), the weights' fingerprint
  weights   safetensors shards + sha256 manifest; load with clear errors
  train     `python -m core.model.train`: reproduces assets/model/
  trace     routing traces (.npz) and their (layer, expert) request trace

Oracles: prefill logits equal token-by-token decode (float32, max abs <= 1e-4); the forward
through the ExpertCache equals the all-resident forward bit for bit; the fast MoE equals a
slow every-expert reference.
"""
