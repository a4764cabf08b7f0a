"""A tiny Kimi-Linear-like hybrid KDA/MLA mixture-of-experts model over bytes.

config   ModelDims (toy) and k3_dims: one dataclass, parameter and byte ledgers
corpus   deterministic multi-domain byte corpus, unigram/bigram baselines
layers   RMSNorm, KDA mixer, MLA mixer (prefill and one-token step)
moe      router (softmax scores), top-k, shared expert; experts come from a provider
experts  ExpertProvider: AllResident, CacheProvider (ExpertCache over the shards)
model    HybridLM: prefill, step (explicit DecodeState), greedy generate
weights  safetensors shards + sha256 manifest; load with clear errors
train    `python -m core.model.train`: reproduces assets/model/
trace    routing traces (.npz) and their (layer, expert) request trace
"""
