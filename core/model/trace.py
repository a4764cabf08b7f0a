"""Routing traces: what the router said for every token and layer, in a compact .npz.

File format (numpy .npz, compressed; N tokens, L layers, M >= k recorded candidates):
  tokens      [N]        uint8    the input byte at each position
  domains     [N]        uint8    corpus domain index (255: unknown)
  top_ids     [N, L, M]  int16    the M highest-scoring experts, descending score
  top_scores  [N, L, M]  float16  their router scores (softmax over all experts)
  chosen      [N, L, k]  int16    the experts used (= top_ids[..., :k] for plain top-k)
  weights     [N, L, k]  float16  their renormalised mixing weights
  meta        [4]        int32    (n_experts, top_k, M, format version)
`request_trace` turns it into the (layer, expert) int32 requests a token-by-token decode
makes (token-major, then layer, then top-k order): what core.experts.replay consumes.
`python -m core.model.trace` records assets/model/trace.npz from held-out text: the first
RECORD_TOKENS held-out bytes as PREFILL calls over independent RECORD_WINDOW-byte windows (each
window starts from an empty state), not a decode. Decode routes the same experts except at
near-ties of the router (tests/core/model/test_trace_decode.py), so `request_trace` replays it in
decode order; the windows only shorten the context each byte is routed with.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from core.errors import ParamError
from core.model.router import Routing

VERSION = 1
TRACE_FILE = "trace.npz"
RECORD_TOKENS = 2048  # held-out bytes the shipped trace covers
RECORD_WINDOW = 256  # bytes per independent prefill call


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutingTrace:
    tokens: np.ndarray
    domains: np.ndarray
    top_ids: np.ndarray
    top_scores: np.ndarray
    chosen: np.ndarray
    weights: np.ndarray
    n_experts: int

    @property
    def shape(self) -> tuple[int, int, int]:
        """(tokens, layers, top_k)."""
        return self.chosen.shape  # type: ignore[return-value]


def from_routing(routing: list[tuple[Routing, ...]] | tuple[Routing, ...], tokens: np.ndarray,
                 domains: np.ndarray | None = None, m: int = 4) -> RoutingTrace:
    """Stack per-call routing (each a tuple of per-layer Routing over its tokens) in order."""
    calls = [routing] if routing and isinstance(routing[0], Routing) else list(routing)
    per_layer = list(zip(*calls, strict=True))  # L tuples of Routing
    scores = torch.stack([torch.cat([r.scores for r in rs]) for rs in per_layer], 1)  # [N, L, E]
    ids = torch.stack([torch.cat([r.ids for r in rs]) for rs in per_layer], 1)  # [N, L, k]
    w = torch.stack([torch.cat([r.weights for r in rs]) for rs in per_layer], 1)  # [N, L, k]
    top_s, top_i = scores.topk(m, dim=-1)  # [N, L, M]
    n = scores.shape[0]
    if len(tokens) != n:
        raise ParamError(f"tokens must have one entry per routed token ({n}), got {len(tokens)}")
    dom = np.full(n, 255, np.uint8) if domains is None else np.asarray(domains, np.uint8)
    return RoutingTrace(tokens=np.asarray(tokens, np.uint8), domains=dom,
                        top_ids=top_i.numpy().astype(np.int16),
                        top_scores=top_s.detach().numpy().astype(np.float16),
                        chosen=ids.numpy().astype(np.int16),
                        weights=w.detach().numpy().astype(np.float16), n_experts=scores.shape[-1])


def save(trace: RoutingTrace, path: str | Path) -> None:
    k, m = trace.chosen.shape[-1], trace.top_ids.shape[-1]
    np.savez_compressed(path, tokens=trace.tokens, domains=trace.domains, top_ids=trace.top_ids,
                        top_scores=trace.top_scores, chosen=trace.chosen, weights=trace.weights,
                        meta=np.array([trace.n_experts, k, m, VERSION], np.int32))


def load(path: str | Path) -> RoutingTrace:
    with np.load(path) as z:
        n_experts, _, _, version = (int(v) for v in z["meta"])
        if version != VERSION:
            raise ParamError(f"{path}: trace format version {version}, expected {VERSION}")
        return RoutingTrace(tokens=z["tokens"], domains=z["domains"], top_ids=z["top_ids"],
                            top_scores=z["top_scores"], chosen=z["chosen"], weights=z["weights"],
                            n_experts=n_experts)


def request_trace(trace: RoutingTrace) -> np.ndarray:
    """(layer, expert) int32 pairs [N * L * k, 2] in decode order: token, layer, top-k rank."""
    N, L, k = trace.chosen.shape
    layers = np.broadcast_to(np.arange(L, dtype=np.int32)[None, :, None], (N, L, k))
    return np.stack([layers.reshape(-1), trace.chosen.astype(np.int32).reshape(-1)], 1)


def prefill_demand(routing: tuple[Routing, ...]) -> np.ndarray:
    """(layer, expert) int32 pairs one forward call fetches: per layer, its visit order."""
    pairs = [(L, e) for L, r in enumerate(routing) for e in r.order]
    return np.array(pairs, np.int32).reshape(-1, 2)


def record(n_tokens: int = RECORD_TOKENS, chunk: int = RECORD_WINDOW) -> RoutingTrace:
    """Routing of the shipped model over the first n_tokens held-out bytes: one prefill call per
    chunk-byte window, each from an empty state (see the module docstring)."""
    from core.model.corpus import build_corpus
    from core.model.weights import load_model

    model = load_model()
    corpus = build_corpus()
    data, dom = corpus.heldout[:n_tokens], corpus.heldout_domains[:n_tokens]
    calls = []
    with torch.no_grad():
        for i in range(0, len(data), chunk):
            x = torch.from_numpy(data[i : i + chunk].astype(np.int64))[None]  # [1, T]
            calls.append(model(x).routing)
    return from_routing(calls, data, dom)


def main(argv: list[str] | None = None) -> int:
    from core.model.weights import ASSET_DIR

    torch.set_num_threads(2)
    t = record()
    save(t, ASSET_DIR / TRACE_FILE)
    req = request_trace(t)
    print(f"wrote {ASSET_DIR / TRACE_FILE}: {t.shape[0]} tokens x {t.shape[1]} layers x "
          f"top-{t.shape[2]}, {len(req)} requests, "
          f"{(ASSET_DIR / TRACE_FILE).stat().st_size:,} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
