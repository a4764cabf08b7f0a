"""Tab: Page pool. One pool of fixed-size pages holds both kinds of serving state: MLA latents,
which grow with the sequence, and KDA state, a constant page group per layer."""

from __future__ import annotations

from core.experiments.scenes import MAX_TOKENS
from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, Preset, TabSpec

TAB = TabSpec(
    id="paging",
    title="Page pool",
    controls=(
        Slider(name="seq_len", label="Sequence length (tokens)", minimum=1, maximum=MAX_TOKENS,
               value=160, demo=300,
               info="The hero: watch MLA pages appear at every page boundary while the KDA "
                    "page groups stay put."),
        Slider(name="tokens_per_page", label="Tokens per page P (toy model)", minimum=32,
               maximum=256, value=64, step=16, demo=80,
               info="One page holds P MLA latents of one layer (P × 128 B)."),
        Choice("dtype", "KDA state dtype for pack / unpack", ("float32", "bfloat16"),
               "float32", demo="bfloat16"),
        Slider(name="k3_tokens_per_page", label="Tokens per page at K3 scale", minimum=256,
               maximum=1024, value=512, step=128, demo=1024),
    ),
    figures=(
        FigureSpec("paging_growth", "MLA pages grow with length; KDA page groups stay constant",
                   "tabs.paging.growth:paging_growth", ("seq_len", "tokens_per_page")),
        FigureSpec("paging_pack", "A real KDA state packed into pages and back",
                   "tabs.paging.pack:paging_pack", ("seq_len", "tokens_per_page", "dtype")),
        FigureSpec("paging_ledger", "The ledger at K3 scale: where MLA overtakes KDA",
                   "tabs.paging.ledger:paging_ledger", ("k3_tokens_per_page",)),
    ),
    more=("dtype",),  # folded under "More controls"
    presets=(
        Preset("A long sequence", "MLA pages grow with every token while the KDA pages stay "
               "put.", {"seq_len": 1024}),
        Preset("Small pages", "Smaller pages waste less of the last one but need more "
               "entries in the page table.", {"tokens_per_page": 32}),
        Preset("bfloat16 state", "Half the bytes per head: more heads fit in a page.",
               {"dtype": "bfloat16"}),
    ),
)
