"""Why the Prefix cache tab's lookup stopped where it did, in a student's words (one entry per
core.prefix.entries REASON). The tab's engine runs: core.experiments.prefix."""

from __future__ import annotations

from core.prefix import entries as E

REASON_WORDS = {
    E.HIT: "the deepest matched boundary has a complete, ready checkpoint group",
    E.SHORT: "the prompt is shorter than one block: nothing to hash",
    E.MISS: "the first block's hash is not in the cache",
    E.NO_CHECKPOINT: "the deepest matched boundary holds no checkpoint group (spacing)",
    E.NOT_READY: "the deepest matched boundary's group was published this step: not ready yet",
    E.PARTIAL: "the deepest matched boundary's group lacks a KDA layer: resuming from it "
               "would be wrong",
    E.EVICTED: "the deepest matched boundary's group was evicted under memory pressure",
    E.LAST_TOKEN: "the prompt ends at the deepest matched boundary: one token must still run "
                  "for the next logits",
}
assert set(REASON_WORDS) == set(E.REASONS)
