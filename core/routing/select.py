"""select_experts: which k experts each row uses, given the router's scores and what is resident.

Pure. Past ROW_PATH rows it is vectorised (tensor ops and one SIMD sort of (score, id) keys,
no Python loop over rows); a call of a few rows (decode has one) is chosen row by row with
sorted(), which costs far less per call, and weights come from the same tensor expressions,
so the two paths agree bit for bit. naive_select_experts below is the per-row loop you would
write on a whiteboard, and the tests hold all three equal.

Ranking: the true ranking of a row is its experts by descending score, ties to the lower id
(a stable sort). The true top-k are its first k ranks. Methods (RouteConfig.method):
  topk         the true top-k (stock); weights = their scores renormalised, bit for bit what
               core.model.moe's stock path computes.
  max_rank     colibri CACHE_ROUTE: ranks 0..J-1 are sacred (taken, resident or not); then every
               resident expert of ranks J..M-1 in rank order until k are chosen (resident fill);
               then the highest unchosen ranks below M (backfill). Each substitute (a chosen
               expert outside the true top-k) has its score multiplied by alpha, then the k
               weights are renormalised, which hands mass back to the true experts.
  cum_prob     the paper's cumulative-probability threshold (arXiv:2412.00099): max_rank with
               a per-row window, the fewest top ranks whose scores reach P of the row's total
               positive mass, floored at k. Unlike colibri's ROUTE_P, P is a fraction of the
               whole distribution (not of the top-M's mass), the window is not bounded by M (M
               is not read) and can grow to E, and ranking and mass use the same scores.
  cache_prior  the paper's Cache-Prior: rank on z' = log s + lam * range * resident, where
               range = the row's max - min log-score (s floored at float32's smallest normal),
               ties to the lower id; take the top k of z'; weights are the unmodified scores
               renormalised over the chosen set. lam = 0 is stock (exactly topk); lam > 1
               ranks every resident expert above every cold one (the k best resident experts,
               when k are resident; up to rounding at lam just above 1).
Output order: the chosen experts of a row in true-rank order (so a stock choice is stock to
the bit, order included). window: how many ranks a substitute may come from (k for topk, M
for max_rank, the row's window for cum_prob, E for cache_prior). kind: how each chosen
expert got its slot (config.KINDS): sacred, resident fill or backfill (max_rank, cum_prob);
stock or resident fill (cache_prior: inside or outside the true top-k); stock (topk).
swaps: chosen experts outside the true top-k.
A row whose chosen scores sum to 0 (all zero) gets equal weights 1/k, so rows always sum to 1.
Rows with a NaN or infinite score fall back to a deterministic stock choice: the top k of the
row with every non-finite score read as -inf (ties to the lower id, so an all-NaN row takes
0..k-1), no duplicate ids, equal weights 1/k, kind stock, 0 swaps, and fallback=True.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from core.routing.config import BACKFILL, RESIDENT_FILL, SACRED, STOCK, RouteConfig
from core.routing.ranking import (
    TINY,
    check_inputs,
    key_ids,
    rank_keys,
    sorted_keys,
    top_ranks,
)

__all__ = ["Selection", "naive_select_experts", "prior_lift", "select_experts", "top_ranks"]

ROW_PATH = 4  # rows up to which a call is chosen row by row (decode calls have one)


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    ids: torch.Tensor  # [N, k] int64, chosen experts in true-rank order
    weights: torch.Tensor  # [N, k] mixing weights, rows sum to 1
    kind: torch.Tensor  # [N, k] int8 codes into config.KINDS
    swaps: torch.Tensor  # [N] int64, chosen experts outside the true top-k
    window: torch.Tensor  # [N] int64, ranks a substitute may come from (k for topk, E prior)
    fallback: torch.Tensor  # [N] bool, row had a non-finite score: stock fallback


def _fill(ranked: torch.Tensor, res: torch.Tensor, window: torch.Tensor, cfg: RouteConfig
          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sacred, resident fill, backfill over ranked ids [N, m] (window [N], k <= window <= m)
    -> (chosen ids [N, k] in rank order, substitute mask [N, k], kind [N, k]).

    The k - J ranks after the sacred ones are the first of ranks J..window-1 ordered by
    (cold, rank): the residents in rank order, then the cold ones (the backfill); one sort of
    small integer keys finds them.
    """
    N, m = ranked.shape
    k, J = cfg.k, cfg.J
    pos = torch.arange(m, dtype=torch.int32)  # [m] rank positions
    cold = ~res.gather(1, ranked)  # [N, m]
    key = pos + m * cold.to(torch.int32)  # [N, m] residents first, each group by rank
    key.masked_fill_((pos < J) | (pos >= window[:, None]), 2 * m)  # never filled
    fill = np.sort(key.numpy(), axis=1)[:, : k - J] % m  # [N, k - J] ranks
    take = np.concatenate((np.broadcast_to(np.arange(J, dtype=np.int32), (N, J)), fill), 1)
    take = torch.from_numpy(np.sort(take, axis=1)).to(torch.int64)  # [N, k] ascending ranks
    resident = ~cold.gather(1, take)
    code = torch.where(take < J, SACRED, torch.where(resident, RESIDENT_FILL, BACKFILL))
    return ranked.gather(1, take), take >= k, code.to(torch.int8)


def _window_fill(s: torch.Tensor, ranked: torch.Tensor, res: torch.Tensor, cfg: RouteConfig
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """max_rank / cum_prob over the true ranking [N, E] -> (ids [N, k], substitute mask
    [N, k], kind [N, k], window [N])."""
    N, E = s.shape
    if cfg.method == "max_rank":
        window = torch.full((N,), cfg.M, dtype=torch.int64)
        return (*_fill(ranked[:, : cfg.M], res, window, cfg), window)
    pos_mass = s.clamp_min(0)  # [N, E]
    goal = cfg.P * pos_mass.sum(1, keepdim=True)  # [N, 1]
    mass = pos_mass.gather(1, ranked).cumsum(1)  # [N, E] cumulative mass by rank
    window = torch.clamp((mass < goal).sum(1) + 1, min=cfg.k, max=E)  # [N]
    m = int(window.max()) if N else cfg.k  # no row looks past its window
    return (*_fill(ranked[:, :m], res, window, cfg), window)


def prior_lift(scores: torch.Tensor, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cache_prior's ranking terms: (log scores [N, E], scores floored at TINY first; the lift
    [N, 1] a resident expert's log score gets, lam times the row's range of log scores)."""
    logs = scores.clamp_min(TINY).log()  # [N, E]
    return logs, lam * (logs.amax(1, keepdim=True) - logs.amin(1, keepdim=True))


def _cache_prior(s: torch.Tensor, keys: torch.Tensor, ranked_keys: torch.Tensor,
                 resident: torch.Tensor, cfg: RouteConfig
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """cache_prior -> (chosen ids [N, k] in true-rank order, substitute mask [N, k], kind).

    keys: the true ranking's keys by expert id; ranked_keys: the same, sorted.
    """
    k = cfg.k
    logs, lift = prior_lift(s, cfg.lam)  # [N, E], [N, 1]
    z = logs + lift * resident.to(logs.dtype)  # [N, E]
    picked = top_ranks(z, k)  # [N, k] best z', ties to the lower id
    mine = keys.gather(1, picked)  # [N, k] their true-ranking keys
    mine.numpy().sort(axis=1)  # true-rank order
    subst = mine > ranked_keys[:, k - 1 : k]  # [N, k] ranked below the k-th
    kind = torch.where(subst, RESIDENT_FILL, STOCK).to(torch.int8)
    return key_ids(mine), subst, kind


def _choose_rows(s: torch.Tensor, resident: torch.Tensor, cfg: RouteConfig
                 ) -> tuple[torch.Tensor, ...]:
    """The same choice, one row at a time in Python: a decode call has one row, and a row of a
    few experts is ranked far faster by sorted() than by the tensor ops above. Mass sums and
    cache_prior's z' are the same tensor expressions as the vectorised path's, so both paths
    agree bit for bit -> (ids, substitute mask, kind, window, stock ids)."""
    N, E = s.shape
    k, J = cfg.k, cfg.J
    vals, flags = s.tolist(), resident.expand(N, E).tolist()
    orders = [sorted(range(E), key=lambda e, v=v: (-v[e], e)) for v in vals]  # true rankings
    windows = [k] * N
    if cfg.method == "max_rank":
        windows = [cfg.M] * N
    elif cfg.method == "cum_prob":
        pos_mass = s.clamp_min(0)  # [N, E]
        goal = cfg.P * pos_mass.sum(1, keepdim=True)  # [N, 1]
        mass = pos_mass.gather(1, torch.tensor(orders, dtype=torch.int64).view(N, E)).cumsum(1)
        windows = torch.clamp((mass < goal).sum(1) + 1, min=k, max=E).tolist()
    elif cfg.method == "cache_prior":
        windows = [E] * N
    zs = None
    if cfg.method == "cache_prior" and cfg.lam != 0.0:
        logs, lift = prior_lift(s, cfg.lam)  # [N, E], [N, 1]
        zs = (logs + lift * resident.to(logs.dtype)).tolist()
    ids, subst, kinds = [], [], []
    for n, order in enumerate(orders):
        if cfg.method in ("max_rank", "cum_prob"):
            res, win = flags[n], windows[n]
            fill = [r for r in range(J, win) if res[order[r]]][: k - J]
            cold = [r for r in range(J, win) if not res[order[r]]][: k - J - len(fill)]
            take = sorted([*range(J), *fill, *cold])
            kind = [SACRED if r < J else RESIDENT_FILL if res[order[r]] else BACKFILL
                    for r in take]
        elif zs is not None:
            z = zs[n]
            rank = {e: r for r, e in enumerate(order)}
            take = sorted(rank[e] for e in sorted(range(E), key=lambda e: (-z[e], e))[:k])
            kind = [RESIDENT_FILL if r >= k else STOCK for r in take]
        else:
            take, kind = list(range(k)), [STOCK] * k
        ids.append([order[r] for r in take])
        subst.append([r >= k for r in take])
        kinds.append(kind)
    stock = [order[:k] for order in orders]
    return (torch.tensor(ids, dtype=torch.int64).view(N, k),
            torch.tensor(subst, dtype=torch.bool).view(N, k),
            torch.tensor(kinds, dtype=torch.int8).view(N, k),
            torch.tensor(windows, dtype=torch.int64).view(N),
            torch.tensor(stock, dtype=torch.int64).view(N, k))


def _choose(s: torch.Tensor, resident: torch.Tensor, cfg: RouteConfig
            ) -> tuple[torch.Tensor, ...]:
    """The vectorised choice -> (ids, substitute mask, kind, window, stock ids)."""
    N, E = s.shape
    k = cfg.k
    keys = rank_keys(s)  # [N, E] the true ranking's sort keys, by expert id
    ranked_keys = sorted_keys(keys)  # [N, E] in rank order
    m = k if cfg.method == "topk" or cfg.method == "cache_prior" else \
        cfg.M if cfg.method == "max_rank" else E
    ranked = key_ids(ranked_keys, m)  # [N, m] the true ranking, best m
    window = torch.full((N,), k, dtype=torch.int64)
    if cfg.method == "topk" or (cfg.method == "cache_prior" and cfg.lam == 0.0):
        ids = ranked[:, :k]  # [N, k]
        subst = torch.zeros(N, k, dtype=torch.bool)
        kind = torch.full((N, k), STOCK, dtype=torch.int8)
        if cfg.method == "cache_prior":
            window.fill_(E)
    elif cfg.method == "cache_prior":
        ids, subst, kind = _cache_prior(s, keys, ranked_keys, resident, cfg)
        window.fill_(E)
    else:
        ids, subst, kind, window = _window_fill(s, ranked, resident.expand(N, E), cfg)
    return ids, subst, kind, window, ranked[:, :k]


def select_experts(scores: torch.Tensor, resident: torch.Tensor, cfg: RouteConfig) -> Selection:
    """scores [N, E] float32 router probabilities, resident bool [E] or [N, E] -> Selection.

    Up to ROW_PATH rows are chosen row by row in Python (_choose_rows), more with tensor ops
    (_choose); the two agree exactly (tests/core/routing/test_twin.py)."""
    check_inputs(scores, resident, cfg)
    N, E = scores.shape
    k = cfg.k
    bad = ~torch.isfinite(scores.sum(-1))  # [N] a non-finite score (or an overflowing sum)
    any_bad = bool(bad.any())
    s = scores
    if any_bad:
        finite = torch.isfinite(scores)  # [N, E]
        bad = ~finite.all(-1)
        any_bad = bool(bad.any())
        s = scores.masked_fill(~finite, -math.inf)
    choose = _choose_rows if N <= ROW_PATH else _choose
    ids, subst, kind, window, stock = choose(s, resident, cfg)
    w = scores.gather(1, ids)  # [N, k]
    if cfg.method in ("max_rank", "cum_prob") and cfg.alpha < 1.0:
        w = torch.where(subst, w * cfg.alpha, w)
    total = w.sum(-1, keepdim=True)  # [N, 1]
    weights = torch.where(total > 0, w / total, 1.0 / k)  # [N, k]
    swaps = subst.sum(1)  # [N]
    if any_bad:
        b = bad[:, None]  # [N, 1]
        ids = torch.where(b, stock, ids)
        weights = torch.where(b, torch.full_like(weights, 1.0 / k), weights)
        kind = torch.where(b, torch.full_like(kind, STOCK), kind)
        swaps = torch.where(bad, 0, swaps)
        window = torch.where(bad, k, window)
    return Selection(ids=ids, weights=weights, kind=kind, swaps=swaps, window=window, fallback=bad)


def naive_select_experts(scores: torch.Tensor, resident: torch.Tensor, cfg: RouteConfig
                         ) -> Selection:
    """The slow twin: one row at a time, following the steps of the module docstring."""
    res = check_inputs(scores, resident, cfg)
    N, E = scores.shape
    k, J = cfg.k, cfg.J
    clean = scores.masked_fill(~torch.isfinite(scores), -math.inf)  # [N, E]
    # NOTE: the same elementwise float32 log as the fast path, so both rank the same values
    logs = clean.clamp_min(TINY).log()  # [N, E]
    out: list[tuple] = []
    for n in range(N):
        vals = clean[n].tolist()
        ranking = sorted(range(E), key=lambda e: (-vals[e], e))  # the true ranking
        by_rank = scores[n][ranking]  # [E] scores by rank
        if not bool(torch.isfinite(scores[n]).all()):
            out.append((ranking[:k], [1.0 / k] * k, [STOCK] * k, 0, k, True))
            continue
        if cfg.method == "topk" or (cfg.method == "cache_prior" and cfg.lam == 0.0):
            picked = {r: STOCK for r in range(k)}
            win = k if cfg.method == "topk" else E
        elif cfg.method in ("max_rank", "cum_prob"):
            if cfg.method == "max_rank":
                win = cfg.M
            else:
                goal = float(cfg.P * scores[n].clamp_min(0).sum())
                mass = by_rank.clamp_min(0).cumsum(0).tolist()  # [E] cumulative, by rank
                win = max(k, next((m + 1 for m in range(E) if mass[m] >= goal), E))
            picked = {r: SACRED for r in range(J)}
            for r in range(J, win):  # resident fill, in rank order
                if len(picked) < k and bool(res[n, ranking[r]]):
                    picked[r] = RESIDENT_FILL
            for r in range(win):  # backfill: the best ranks left
                if len(picked) < k and r not in picked:
                    picked[r] = BACKFILL
        else:
            win = E
            row = logs[n]  # [E] by expert id
            span = row.max() - row.min()
            z = (row + cfg.lam * span * res[n].to(row.dtype)).tolist()
            best = sorted(range(E), key=lambda e: (-z[e], e))[:k]  # ties to the lower id
            picked = {ranking.index(e): 0 for e in best}
            picked = {r: STOCK if r < k else RESIDENT_FILL for r in picked}
        take = sorted(picked)
        w = by_rank[take]  # [k]
        if cfg.method in ("max_rank", "cum_prob") and cfg.alpha < 1.0:
            w = torch.stack([x * cfg.alpha if r >= k else x for r, x in zip(take, w, strict=True)])
        weights = (w / w.sum()).tolist() if float(w.sum()) > 0 else [1.0 / k] * k
        out.append(([ranking[r] for r in take], weights,
                    [picked[r] for r in take], sum(r >= k for r in take), win, False))
    if not out:
        z = torch.zeros(0, k, dtype=torch.int64)
        return Selection(ids=z, weights=z.to(scores.dtype), kind=z.to(torch.int8), swaps=z[:, 0],
                         window=z[:, 0], fallback=torch.zeros(0, dtype=torch.bool))
    ids, w, kind, swaps, win, bad = zip(*out, strict=True)
    return Selection(ids=torch.tensor(ids, dtype=torch.int64),
                     weights=torch.tensor(w, dtype=scores.dtype),
                     kind=torch.tensor(kind, dtype=torch.int8),
                     swaps=torch.tensor(swaps, dtype=torch.int64),
                     window=torch.tensor(win, dtype=torch.int64), fallback=torch.tensor(bad))
