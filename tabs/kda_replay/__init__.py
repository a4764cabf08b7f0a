"""Tab: KDA replay. Snapshot vs raw-input replay for speculative rollback of a KDA state."""

from __future__ import annotations

from tabs.controls import Choice, Slider
from tabs.kda_replay.common import DRAFT_LEN
from tabs.spec import FigureSpec, Preset, TabSpec

TAB = TabSpec(
    id="kda_replay",
    title="KDA replay",
    controls=(
        DRAFT_LEN,
        Slider(name="accepted", label="Accepted drafts n (0 ≤ n ≤ γ)", minimum=0,
               maximum=DRAFT_LEN.maximum, value=2, demo=3, max_from="draft_len"),
        Slider(name="heads", label="KDA heads H (toy)", minimum=1, maximum=16, value=4, demo=8),
        Slider(name="dk", label="Key width d_k (toy)", minimum=8, maximum=128, value=32, step=8,
               demo=64),
        Slider(name="dv", label="Value width d_v (toy)", minimum=8, maximum=128, value=32, step=8,
               demo=64),
        Choice(
            "dtype",
            "Compute dtype for the consistency check",
            ("float64", "float32"),
            "float64",
            demo="float32",
        ),
    ),
    figures=(
        FigureSpec(
            "kda_replay_principle",
            "The whole bill of one verify step, and what each scheme keeps",
            "tabs.kda_replay.principle:kda_replay_principle",
            ("draft_len", "accepted", "heads", "dk", "dv"),
        ),
        FigureSpec(
            "kda_replay_cost",
            "Memory saved: the whole bill vs the per-position ratio",
            "tabs.kda_replay.cost:kda_replay_cost",
            ("draft_len", "heads", "dk", "dv"),
        ),
        FigureSpec(
            "kda_replay_consistency",
            "Replay consistency: zero, partial, all drafts accepted (and the conv window)",
            "tabs.kda_replay.consistency:kda_replay_consistency",
            ("draft_len", "accepted", "heads", "dk", "dv", "dtype"),
        ),
        FigureSpec(
            "kda_replay_rollback",
            "Rollback cost explorer at K3 scale: bytes held and moved",
            "tabs.kda_replay.rollback:kda_replay_rollback",
            ("draft_len",),
        ),
    ),
    more=("dtype",),  # folded under "More controls"
    presets=(
        Preset("Every draft accepted", "Nothing to roll back: compare what each scheme still "
               "held for a step that needed none of it.", {"draft_len": 4, "accepted": 4}),
        Preset("Every draft rejected", "The worst case: only the bonus token is kept; see how "
               "little replay has to redo.", {"draft_len": 4, "accepted": 0}),
        Preset("Long drafts", "Many drafts per step: watch snapshot bytes grow with the "
               "window while replay records stay small.", {"draft_len": 16, "accepted": 8}),
        Preset("Wide heads", "Head width like a large model's: the state grows as dk x dv, a "
               "replay record as dk + dv.", {"dk": 128, "dv": 128}),
    ),
)
