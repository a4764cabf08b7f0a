"""The colours of the Cache-aware routing tab's arms, families of settings and slot kinds. The
settings themselves: core.experiments.routing."""

from __future__ import annotations

from tabs.palette import ROLE

ARM_NAMES = ("stock", "routing", "prefetch", "both")
ARM_COLOUR = {"stock": ROLE["reference"], "routing": ROLE["rejected"],
              "prefetch": ROLE["prefetch"], "both": ROLE["replay"]}
# One look per family of settings, on every figure: max_rank keeping the top expert (J = 1),
# max_rank free to swap it (J = 0), and cache_prior (which never keeps a rank sacred).
FAMILY_STYLE = {
    "max_rank J=1": {"color": ROLE["replay"], "marker": "o", "ls": "-"},
    "max_rank J=0": {"color": ROLE["rejected"], "marker": "s", "ls": "--"},
    "cache_prior": {"color": ROLE["waste"], "marker": "D", "ls": "-."},
}
KIND_COLOUR = {"stock": ROLE["reference"], "sacred": ROLE["reference"],
               "resident fill": ROLE["hit"], "backfill": ROLE["miss"]}


def family(method: str, J: int) -> str:
    """The FAMILY_STYLE key of a setting (J = k is stock and belongs to no family)."""
    return "cache_prior" if method == "cache_prior" else f"max_rank J={J}"
