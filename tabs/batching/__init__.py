"""Tab: Batching. The continuous-batching scheduler stepped through on the lab's real engine: what
each request does in each step, time to first token against time per output token by policy,
pages and preemption; and what batching does to the experts, to routing and to texts."""

from __future__ import annotations

from core.experiments.batching_workload import (
    BUDGETS,
    CHUNKS,
    MAX_BATCH,
    MAX_SPACING,
    MAX_STEPS,
    POOL_MAX,
    POOL_MIN,
    POOL_STEP,
)
from tabs.batching.common import RUN
from tabs.controls import Choice, Slider
from tabs.spec import FigureSpec, LiveSpec, Preset, TabSpec

TIGHT_POOL = 44  # pages: optimistic admission runs dry and preempts (tests/lessons)

TAB = TabSpec(
    id="batching",
    title="Batching",
    controls=(
        Slider(name="max_batch", label="Batch size (requests running at once)", minimum=1,
               maximum=MAX_BATCH, value=4, demo=1,
               info="Requests holding pages and sharing each step; the rest wait in a queue."),
        Choice("policy", "Scheduling policy", ("mixed", "prefill_first"), "mixed",
               demo="prefill_first",
               info="mixed: decode tokens first, prompt chunks fill the rest of the budget · "
                    "prefill_first: a step is all prefill while any prompt waits"),
        Slider(name="max_step_tokens", label="Token budget per step", minimum=BUDGETS[0],
               maximum=BUDGETS[1], step=64, value=256, demo=128,
               info="The most tokens one step feeds through the model, all requests together."),
        Slider(name="pool_pages", label="Page pool (pages)", minimum=POOL_MIN,
               maximum=POOL_MAX, step=POOL_STEP, value=POOL_MAX, demo=TIGHT_POOL,
               info="Every request holds its KDA state and its MLA pages here."),
        Slider(name="step", label="Show up to step", minimum=1, maximum=MAX_STEPS,
               value=MAX_STEPS, demo=8,
               info="Step through the schedule; the maximum shows the whole run."),
        Slider(name="prefill_chunk", label="Prefill chunk (most prompt tokens a step)",
               minimum=CHUNKS[0], maximum=CHUNKS[1], step=64, value=128, demo=64),
        Choice("admission", "Admission", ("reserve", "optimistic"), "reserve",
               demo="optimistic",
               info="reserve: admit only with every page it can need · optimistic: admit on "
                    "its first chunk's pages, preempt the newest when the pool runs dry"),
        Slider(name="spacing", label="Arrival spacing (steps between requests)", minimum=0,
               maximum=MAX_SPACING, value=2, demo=0),
    ),
    figures=(
        FigureSpec("batching_schedule", "The scheduler, step by step",
                   "tabs.batching.schedule:batching_schedule", (*RUN, "step")),
        FigureSpec("batching_latency", "Time to first token and time per output token, by policy",
                   "tabs.batching.latency:batching_latency", RUN),
        FigureSpec("batching_pages", "Pages: how many fit, and what preemption recomputes",
                   "tabs.batching.pages:batching_pages", RUN),
        FigureSpec("batching_experts", "MoE under batching: the expert union and the cache",
                   "tabs.batching.experts:batching_experts", ("max_batch",)),
        FigureSpec("batching_routing", "Batch-aware routing: fewer experts, at a cost",
                   "tabs.batching.routing:batching_routing", ("max_batch",)),
        FigureSpec("batching_invariance", "Does a request's text depend on its batch?",
                   "tabs.batching.invariance:batching_invariance", ("max_batch",)),
    ),
    more=("prefill_chunk", "admission", "spacing"),
    stepper="step",
    presets=(
        Preset("One request at a time", "Batch size 1: each request waits for the one before "
               "it to finish, so time to first token grows with its place in the queue.",
               {"max_batch": 1}),
        Preset("nano-vllm's prefill-first", "A step is all prefill while a prompt waits: "
               "running requests stall (yellow) and take more than one step per byte.",
               {"policy": "prefill_first"}),
        Preset("Chunked prefill (mixed)", "Decodes first, prompts in 64-token chunks in a "
               "128-token budget: no request stalls, but long prompts wait longer.",
               {"max_step_tokens": 128, "prefill_chunk": 64}),
        Preset("A tight pool that preempts", f"Optimistic admission into {TIGHT_POOL} pages: "
               "the pool runs dry, the newest request is preempted and recomputed.",
               {"admission": "optimistic", "pool_pages": TIGHT_POOL}),
    ),
    live=LiveSpec("batching_throughput", "Throughput against batch size, measured on this "
                  "machine", "tabs.batching.live:batching_throughput", ()),
)
