"""`python -m core.model.train`: reproduce assets/model/ (weights, manifest, curve, eval).

Seeded and deterministic (torch.manual_seed, a numpy Generator for batches, deterministic
algorithms, 2 threads): the same command gives the same weights on the same machine. AdamW,
warmup then cosine decay, a Switch-style load-balance loss so experts do not collapse. The
curve (train bpb every log_every steps, held-out bpb every eval_every) goes to curve.json;
held-out bpb against unigram and bigram baselines goes to eval.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from core.model.config import ModelDims
from core.model.corpus import DOMAINS, bigram_bpb, build_corpus, unigram_bpb
from core.model.evaluate import model_bpb
from core.model.model import HybridLM
from core.model.moe import balance_loss
from core.model.weights import ASSET_DIR, save_model


@dataclass(frozen=True, slots=True)
class TrainConfig:
    steps: int = 400  # about 5 minutes on 2 idle CPU cores (0.7 s a step)
    batch: int = 16
    seq: int = 128  # training windows; the model's context is 256
    lr: float = 3e-3
    min_lr_frac: float = 0.1
    warmup: int = 30
    weight_decay: float = 0.01
    balance: float = 0.01  # load-balance loss weight
    grad_clip: float = 1.0
    seed: int = 0
    log_every: int = 10
    eval_every: int = 100
    eval_windows: int = 32  # during training; the final eval uses all held-out windows


def lr_at(step: int, c: TrainConfig) -> float:
    if step < c.warmup:
        return c.lr * (step + 1) / c.warmup
    t = (step - c.warmup) / max(1, c.steps - c.warmup)
    return c.lr * (c.min_lr_frac + (1 - c.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * t)))


def bar(step: int, total: int, loss: float, t0: float) -> None:
    n = int(30 * step / total)
    eta = (time.time() - t0) / max(step, 1) * (total - step)
    print(f"\r[{'#' * n}{'.' * (30 - n)}] {step}/{total} bpb {loss:.3f} eta {eta:4.0f}s",
          end="", file=sys.stderr, flush=True)


def train(c: TrainConfig, dims: ModelDims, out: Path) -> dict[str, object]:
    torch.manual_seed(c.seed)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    corpus = build_corpus()
    data = torch.from_numpy(corpus.train.astype(np.int64))
    rng = np.random.default_rng(c.seed)
    model = HybridLM(dims)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=c.lr, betas=(0.9, 0.95))
    curve: list[dict[str, float]] = []
    t0 = time.time()
    for step in range(c.steps):
        starts = torch.from_numpy(rng.integers(0, len(data) - c.seq - 1, c.batch))
        x = data[starts[:, None] + torch.arange(c.seq + 1)]  # [B, T+1]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, c)
        o = model(x[:, :-1])
        ce = F.cross_entropy(o.logits.reshape(-1, dims.vocab), x[:, 1:].reshape(-1))
        aux = sum(balance_loss(r, dims.n_experts) for r in o.routing) / dims.n_layers
        opt.zero_grad(set_to_none=True)
        (ce + c.balance * aux).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), c.grad_clip)
        opt.step()
        bpb = ce.item() / math.log(2)
        if step % c.log_every == 0 or step == c.steps - 1:
            point = {"step": step, "train_bpb": round(bpb, 4), "balance": round(aux.item(), 4),
                     "lr": lr_at(step, c), "seconds": round(time.time() - t0, 1)}
            if step % c.eval_every == 0 or step == c.steps - 1:
                model.eval()
                point["heldout_bpb"] = round(model_bpb(model, corpus.heldout,
                                                       max_windows=c.eval_windows), 4)
                model.train()
            curve.append(point)
        bar(step + 1, c.steps, bpb, t0)
    print(file=sys.stderr)
    train_seconds = time.time() - t0
    model.eval()
    result = {
        "heldout_bytes": int(len(corpus.heldout)),
        "train_bytes": int(len(corpus.train)),
        "domains": list(DOMAINS),
        "model_bpb": round(model_bpb(model, corpus.heldout), 4),
        "unigram_bpb": round(unigram_bpb(corpus.train, corpus.heldout), 4),
        "bigram_bpb": round(bigram_bpb(corpus.train, corpus.heldout), 4),
        "train_seconds": round(train_seconds, 1),
        "params": dims.total_params,
        "config": asdict(c),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "curve.json").write_text(json.dumps({"config": asdict(c), "points": curve}) + "\n")
    (out / "eval.json").write_text(json.dumps(result, indent=1) + "\n")
    save_model(model, out, extra={"train": asdict(c)})
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.model.train", description=__doc__)
    p.add_argument("--steps", type=int, default=TrainConfig().steps)
    p.add_argument("--out", type=Path, default=ASSET_DIR)
    a = p.parse_args(argv)
    r = train(TrainConfig(steps=a.steps), ModelDims(), a.out)
    print(f"held-out bits per byte: model {r['model_bpb']}, bigram {r['bigram_bpb']}, "
          f"unigram {r['unigram_bpb']} ({r['train_seconds']} s training)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
