"""Live text (never a figure, never baselined): speculative vs plain greedy tokens/s, measured
now on this machine for the chosen prompt kind and draft length."""

from __future__ import annotations

from core.experiments.engine import REPEAT, speedup_now
from core.experiments.scenes import N_NEW
from tabs.spec import Progress, no_progress


def engine_speedup(draft_len: int, kind: str, progress: Progress = no_progress) -> str:
    c = speedup_now(draft_len, kind,
                    on_round=lambda i, n: progress(i, n, "plain, then speculative decoding"))
    plain, spec = c.plain, c.spec
    assert spec.spec is not None
    return (
        f"Prompt **{kind}**, draft length {draft_len}, {N_NEW} bytes each way, best of "
        f"{REPEAT} runs on this machine just now:\n\n"
        f"| decoding | forward passes | decode time | bytes/s |\n|---|---:|---:|---:|\n"
        f"| plain greedy | {len(plain.steps)} | {plain.decode_seconds * 1e3:.0f} ms | "
        f"{plain.tokens_per_second:.1f} |\n"
        f"| speculative | {spec.spec.steps} verify passes | {spec.decode_seconds * 1e3:.0f} ms "
        f"| {spec.tokens_per_second:.1f} |\n\n"
        f"**Measured speedup: {c.speedup:.2f}x** with {c.acceptance:.0%} of drafts accepted; "
        f"same text both ways: {'yes' if c.same_text else 'NO'}. A verify pass runs every "
        f"window position through the model, so fewer passes is not the same as less time: "
        f"times vary from run to run, so they appear only here, never on a figure."
    )
