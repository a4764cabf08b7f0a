"""Role colours: one meaning per colour on every tab (Okabe-Ito, colour-blind safe)."""

from __future__ import annotations

from types import MappingProxyType

ROLE = MappingProxyType(
    {
        # what is being compared
        "reference": "#222222",  # the slow, obviously-correct oracle / ground truth
        "snapshot": "#D55E00",  # full state copies (the expensive scheme)
        "replay": "#0072B2",  # raw inputs / projection cache (the cheap scheme)
        "accepted": "#009E73",  # committed, accepted, hit
        "rejected": "#CC79A7",  # rolled back, rejected
        # cache and memory events
        "hit": "#009E73",
        "miss": "#D55E00",
        "prefetch": "#56B4E9",
        "waste": "#E69F00",
        "pinned": "#F0E442",
        "inflight": "#CC79A7",
        "empty": "#F2F2F2",
        # page kinds
        "mla": "#0072B2",
        "kda": "#009E73",
        # neutral context
        "neutral": "#999999",
        "grid": "#E3E3E3",
        "annotation": "#444444",
    }
)

# Roles drawn side by side, so told apart by colour alone: every pair within a group must stay
# distinguishable under protanopia, deuteranopia and tritanopia (tests/figures/test_palette.py).
CONTRASTED: tuple[tuple[str, ...], ...] = (
    ("reference", "snapshot", "replay", "accepted", "rejected"),
    ("hit", "miss", "prefetch", "waste", "pinned", "inflight", "empty"),
    ("mla", "kda"),
)
