"""Live text (never a figure, never baselined): the prefill time the cache saves, measured now."""

from __future__ import annotations

from core.experiments.prefix import time_saved_now
from tabs.spec import Progress, no_progress


def prefix_time_saved(checkpoint_every: int, preset: str,
                      progress: Progress = no_progress) -> str:
    t = time_saved_now(checkpoint_every, preset,
                       on_round=lambda i, n: progress(i, n, "a cold prefill, then a cached one"))
    ms = 1e3
    share = t.saved_seconds / t.cold_seconds if t.cold_seconds > 0 else 0.0
    return (
        f"Preset **{preset}**, a checkpoint group every {checkpoint_every} block(s), "
        f"best of {t.repeat} runs on this machine just now:\n\n"
        f"| prefill of the request | tokens computed | wall time |\n|---|---:|---:|\n"
        f"| cold (no prefix cache) | {t.reused_tokens + t.computed_tokens} | "
        f"{t.cold_seconds * ms:.1f} ms |\n"
        f"| with the cache ({t.reused_tokens} tokens reused) | {t.computed_tokens} | "
        f"{t.reuse_seconds * ms:.1f} ms |\n\n"
        f"**Saved: {t.saved_seconds * ms:.1f} ms ({share:.0%} of the cold prefill).** "
        f"Times vary from run to run, so they appear only here, never on a figure."
    )
