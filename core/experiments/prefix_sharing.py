"""Why a prefix hit shares latent pages in place and copies KDA states, measured on an Engine.

sharing(checkpoint_every, n_new) serves the hit preset's REQUEST on a fork of the Prefix cache
tab's engine (core.experiments.prefix.base) and reads the pool's own pages:
  shared    the request's MLA pages of the reused blocks: pages the cache holds too (refcount
            2), read in place, none copied
  copied    the request's KDA pages: its own (refcount 1), filled from the checkpoint group of
            the boundary it resumed at (that group's pages stay the cache's)
  cached_changed   bytes of those cached pages (shared latents and the group) that differ after
            the request decoded n_new bytes, against a snapshot taken before it was submitted:
            0, because nothing is ever written to a full block or a published group
  in_place_changed   bytes of the group's state (S and conv tails, not the pages' unused rest)
            that would differ had the request run its KDA layers in them (its state now, laid
            out as the group's pages, against the group): what sharing the state would have
            done to the checkpoint
  step_changed   the fraction of the request's KDA state values (S and conv tails) that one
            more decode step changes
Oracle: the pool's refcounts and bytes, read directly (no engine verdict is used).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.errors import check_int
from core.experiments.prefix import base, fork
from core.experiments.scenes import REQUEST
from core.paging.batch import read_kda


@dataclass(frozen=True, slots=True, kw_only=True)
class Sharing:
    reused_blocks: int
    shared_pages: int  # MLA pages read in place (the cache's and the request's)
    copied_pages: int  # KDA pages of the request's own
    group_pages: int  # the checkpoint group's pages in the cache
    decoded: int  # bytes decoded after the prefill
    cached_bytes: int  # bytes of the cached pages the request used
    cached_changed: int  # of those, bytes that differ after decoding
    in_place_changed: int  # bytes of the group that running the state in place would change
    step_changed: float  # fraction of state values one decode step changes


def _state(seq) -> torch.Tensor:  # every KDA layer's S and conv tail, flat, a copy
    return torch.cat([t.reshape(-1) for s in read_kda([seq]) for t in (s.S, s.conv)]).clone()


@torch.no_grad()
def sharing(checkpoint_every: int, n_new: int = 32) -> Sharing:
    check_int("n_new", n_new, 3, 128)
    eng = fork(base(checkpoint_every))
    pool = eng.pool
    before = pool.arena.clone()  # [n_pages, page_bytes]
    eng.submit(REQUEST, n_new)
    eng.step()  # admitted: the prefix adopted, the group copied, the first chunk computed
    req = eng.scheduler.running[0]
    while req.prefill is None:
        eng.step()
    seq, blocks = req.seq, req.first_admission.lookup.boundary_blocks
    digest = eng.cache.hashes(REQUEST, req.salt)[blocks - 1]
    group = [p for layer in eng.cache.groups[digest].layers for p in layer]
    shared = [p for t in seq.mla_tables for p in t[:blocks]]
    own = [p for g in seq.kda_groups for p in g]
    assert all(pool.refcount(p) == 2 for p in shared) and all(pool.refcount(p) == 1 for p in own)
    state = _state(seq)
    eng.step()  # one decode step
    step_changed = float((_state(seq) != state).float().mean())
    while req.emitted < n_new - 1:
        eng.step()
    geo = seq.geometry  # per KDA layer: the heads' pages (whole), then the conv tail's bytes
    used = torch.zeros(len(own), pool.page_bytes, dtype=torch.bool)  # the state's own bytes
    per_layer = len(own) // len(seq.kda_groups)
    for i in range(len(own)):
        used[i, : pool.page_bytes if i % per_layer < geo.heads.pages else geo.kda_conv_bytes] = 1
    mine = pool.arena[torch.tensor(own)]  # the state now, in the group's page layout
    in_place = int(((mine != pool.arena[torch.tensor(group)]) & used).sum())
    while eng.running:
        eng.step()
    eng.check()
    cached = torch.tensor(shared + group)
    return Sharing(
        reused_blocks=blocks, shared_pages=len(shared), copied_pages=len(own),
        group_pages=len(group), decoded=n_new,
        cached_bytes=int(cached.numel()) * pool.page_bytes,
        cached_changed=int((pool.arena[cached] != before[cached]).sum()),
        in_place_changed=in_place, step_changed=step_changed)
