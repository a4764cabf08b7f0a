"""`python -m core.model.train`: reproduce assets/model/ (weights, manifest, curve, eval).

Seeded and deterministic (torch.manual_seed, a numpy Generator for batches, a fixed thread
count, denormals flushed; with more than one thread torch's deterministic kernels): the same
command gives the same bytes in every output file on the same machine and thread count (no
wall-clock time is written; it is printed). Two threads by default: 1.1 s a step on 2 idle
cores against 1.5 s with one; on a busy machine pass --threads 1 (two threads waiting on each
other's core ran 4x slower there). The shipped run: 700 steps in 895 s of training, 931 s in
all with the corpus and the final evaluation; 1.43 M bytes seen.
AdamW, warmup then cosine decay, a Switch-style load-balance loss so experts do not collapse;
KDA layers train through the chunked form (core/kda/differentiable.py). The curve (train bpb every
log_every steps, held-out bpb on eval_windows evenly spaced windows every eval_every) goes to
curve.json; held-out bpb per domain against unigram, bigram and zlib goes to eval.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from core.errors import ParamError, check_choice, check_int
from core.model.config import ModelDims
from core.model.corpus import DOMAINS, SOURCES, bigram_bpb, build_corpus, unigram_bpb, zlib_bpb
from core.model.evaluate import domain_report, model_bpb
from core.model.model import HybridLM
from core.model.moe import balance_loss
from core.model.weights import ASSET_DIR, save_model


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainConfig:
    steps: int = 700  # about 15 minutes on 2 idle cores
    batch: int = 8  # small batches, more updates: the budget is compute, not data
    seq: int = 256  # training windows = the model's context
    lr: float = 4e-3
    min_lr_frac: float = 0.1
    warmup: int = 20
    weight_decay: float = 0.01
    balance: float = 0.01  # load-balance loss weight
    grad_clip: float = 1.0
    seed: int = 0
    log_every: int = 10
    eval_every: int = 100
    eval_windows: int = 32  # during training, evenly spaced over the held-out text
    final_windows: int | None = None  # the final eval: None = every held-out window
    corpus: str = "stdlib"
    threads: int = 2  # torch threads; the bits repeat for a given thread count

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "seq", "warmup", "log_every", "eval_every",
                     "eval_windows"):
            check_int(name, getattr(self, name), 1)
        check_int("seed", self.seed, 0)
        check_int("threads", self.threads, 1, 64)
        if self.final_windows is not None:
            check_int("final_windows", self.final_windows, 1)
        check_choice("corpus", self.corpus, SOURCES)
        if not (0 < self.lr < 1 and 0 <= self.min_lr_frac <= 1):
            raise ParamError(f"lr must be in (0, 1) and min_lr_frac in [0, 1], got {self.lr}, "
                             f"{self.min_lr_frac}")


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


@contextlib.contextmanager
def deterministic(threads: int = 1) -> Iterator[None]:
    """Fixed threads, denormals flushed; the old settings come back afterwards.

    NOTE: with one thread every CPU kernel runs serially, so the bits repeat without torch's
    deterministic kernels (25% slower here); with more threads those are switched on.
    """
    old = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(check_int("threads", threads, 1, 64))
    torch.use_deterministic_algorithms(threads > 1)
    torch.set_flush_denormal(True)  # NOTE: decays near exp(-80) make denormal grads: slow
    try:
        yield
    finally:
        torch.set_flush_denormal(False)
        torch.set_num_threads(old[0])
        torch.use_deterministic_algorithms(old[1])


def fit(c: TrainConfig, dims: ModelDims, data: torch.Tensor, heldout: np.ndarray
        ) -> tuple[HybridLM, list[dict[str, float]]]:
    """The training loop over data [n] int64; returns the model (eval mode) and its curve."""
    torch.manual_seed(c.seed)
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
                     "lr": lr_at(step, c)}
            if step % c.eval_every == 0 or step == c.steps - 1:
                model.eval()
                point["heldout_bpb"] = round(model_bpb(model, heldout, max_windows=c.eval_windows,
                                                       spread=True), 4)
                model.train()
            curve.append(point)
        bar(step + 1, c.steps, bpb, t0)
    print(file=sys.stderr)
    return model.eval(), curve


def train(c: TrainConfig, dims: ModelDims, out: Path) -> dict[str, object]:
    """Train, evaluate side by side with the baselines, write everything into out."""
    with deterministic(c.threads):
        t0 = time.time()
        corpus = build_corpus(c.corpus)
        data = torch.from_numpy(corpus.train.astype(np.int64))  # [n]
        model, curve = fit(c, dims, data, corpus.heldout)
        train_seconds = time.time() - t0
        per_domain = domain_report(model, corpus, c.final_windows)
        result = {
            "corpus": c.corpus,
            "heldout_bytes": int(len(corpus.heldout)),
            "train_bytes": int(len(corpus.train)),
            "domains": list(DOMAINS),
            "model_bpb": per_domain["all"]["model_bpb"],
            "unigram_bpb": round(unigram_bpb(corpus.train, corpus.heldout), 4),
            "bigram_bpb": round(bigram_bpb(corpus.train, corpus.heldout), 4),
            "zlib_bpb": round(zlib_bpb(corpus.heldout), 4),
            "per_domain": per_domain,
            "params": dims.total_params,
            "config": asdict(c),
        }
        out.mkdir(parents=True, exist_ok=True)
        (out / "curve.json").write_text(json.dumps({"config": asdict(c), "points": curve}) + "\n")
        (out / "eval.json").write_text(json.dumps(result, indent=1) + "\n")
        save_model(model, out, extra={"train": asdict(c)})
    return {**result, "train_seconds": round(train_seconds, 1),
            "total_seconds": round(time.time() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.model.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=TrainConfig().steps)
    p.add_argument("--out", type=Path, default=ASSET_DIR, help="default: assets/model")
    p.add_argument("--corpus", choices=SOURCES, default=TrainConfig().corpus)
    p.add_argument("--threads", type=int, default=TrainConfig().threads)
    a = p.parse_args(argv)
    r = train(TrainConfig(steps=a.steps, corpus=a.corpus, threads=a.threads), ModelDims(), a.out)
    print(f"held-out bits per byte: model {r['model_bpb']}, zlib {r['zlib_bpb']}, bigram "
          f"{r['bigram_bpb']}, unigram {r['unigram_bpb']} ({r['train_seconds']} s training, "
          f"{r['total_seconds']} s with the corpus and the final eval)")
    for name, row in r["per_domain"].items():
        print(f"  {name:>10}: model {row['model_bpb']:.3f}  unigram {row['unigram_bpb']:.3f}  "
              f"bigram {row['bigram_bpb']:.3f}  zlib {row['zlib_bpb']:.3f}  "
              f"({row['positions']:,} positions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
