"""The look shared by the Batching figures: what a cell's colour means, the policies' colours,
the run's knobs as the figures read them, and the batch-size axis of the sweep figures. The
runs they draw: core.experiments.batching (the schedule), batching_sweep (against B)."""

from __future__ import annotations

from matplotlib.ticker import FixedLocator, NullLocator

from tabs.palette import ROLE

RUN = ("max_batch", "max_step_tokens", "prefill_chunk", "policy", "admission", "pool_pages",
       "spacing")  # run(...)'s parameters, in its order

# What a request did in a step: one colour each (absent is the background).
KIND_COLOUR = {
    "absent": "#FFFFFF",
    "waiting": "#D9D9D9",  # queued, no pages
    "stalled": ROLE["pinned"],  # holding pages, given no work
    "prefill": ROLE["mla"],  # a prompt chunk
    "replay": ROLE["waste"],  # recomputed after a preemption
    "decode": ROLE["accepted"],  # one byte out
    "verify": ROLE["prefetch"],  # a verify window: several bytes may come out
    "preempted": ROLE["miss"],  # its pages taken back
}
KIND_LABEL = {
    "waiting": "waiting (no pages)",
    "stalled": "stalled (pages, no work)",
    "prefill": "prefill chunk (tokens)",
    "replay": "recompute after preemption",
    "decode": "decode: one byte",
    "verify": "verify window (tokens)",
    "preempted": "preempted",
}
POLICY_COLOUR = {"mixed": ROLE["replay"], "prefill_first": ROLE["snapshot"]}
POLICY_LABEL = {"mixed": "mixed (chunked prefill)", "prefill_first": "prefill first"}


def batch_axis(ax, batches: tuple[int, ...], current: int | None = None) -> None:
    """A log2 batch-size axis over the sweep's batches; the tab's batch size marked."""
    ax.set_xscale("log", base=2)
    ax.set_xlim(batches[0] / 1.3, batches[-1] * 1.3)
    ax.xaxis.set_major_locator(FixedLocator(list(batches)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(b) for b in batches])
    ax.set_xlabel("batch size B")
    if current is not None:
        ax.axvline(current, color=ROLE["annotation"], ls=":", lw=1.0, zorder=1)


def settings_line(max_batch: int, max_step_tokens: int, prefill_chunk: int, policy: str,
                  admission: str, pool_pages: int, spacing: int) -> str:
    """The run's knobs in a few words (a figure's second title line)."""
    arrive = "all at once" if spacing == 0 else f"one every {spacing} steps"
    return (f"{POLICY_LABEL[policy]}, batch {max_batch}, budget {max_step_tokens} tokens, "
            f"chunk {prefill_chunk}, {admission}, {pool_pages} pages; arrivals {arrive}")
