"""Tab: Serve. Type a prompt; the tiny model generates it through every subsystem of the lab,
live: prefix cache, page pool, expert cache (and cache-aware routing), speculative decoding."""

from __future__ import annotations

from core.model.manifest import shipped_dims
from core.serve.limits import MAX_DRAFT, MAX_PROMPT_BYTES, MAX_SESSION_NEW, default_slots
from tabs.controls import Check, Slider, Text
from tabs.spec import FigureSpec, Preset, RunSpec, TabSpec

PARAMS = ("prompt", "n_new", "draft_len", "capacity", "prefix_cache", "routing")
PRESET_PROMPT = (
    "import os\n"
    "import sys\n"
    "\n"
    "\n"
    "def main(argv):\n"
    "    for name in argv:\n"
    "        print(name)\n"
    "    return 0\n"
    "\n"
    "\n"
    "def parse(argv):\n"
    "    for name in argv:\n"
)
_d = shipped_dims()

TAB = TabSpec(
    id="serve",
    title="Serve",
    controls=(
        Slider(name="draft_len", label="Draft length γ (tokens drafted per verify pass)",
               minimum=0, maximum=MAX_DRAFT, value=4, demo=0,
               info="The hero: 0 is plain greedy decoding (a token is one byte in this model)."),
        Text("prompt", "Prompt (any UTF-8; the model works on bytes)", PRESET_PROMPT,
             max_bytes=MAX_PROMPT_BYTES,
             info="The model is tiny, trained on Python source and pydoc prose: it continues "
                  "code that stops mid-line (after “self.” or “return ”) and JSON-like records; "
                  "a prompt that ends a line, or plain English, often gets spaces or a loop "
                  "back."),
        Slider(name="n_new", label="Bytes to generate", minimum=8, maximum=MAX_SESSION_NEW,
               value=64, step=8),
        Slider(name="capacity", label="Expert cache slots", minimum=_d.top_k + 1,
               maximum=_d.n_layers * _d.n_experts, value=default_slots(_d)),
        Check("prefix_cache", "Prefix cache", True),
        Check("routing", "Cache-aware routing (prefer resident experts)", False),
    ),
    figures=(
        FigureSpec("serve_experts", "Expert cache: resident experts and hit rate per layer",
                   "tabs.serve.experts:serve_experts", PARAMS),
        FigureSpec("serve_memory", "Page pool and prefix reuse", "tabs.serve.memory:serve_memory",
                   PARAMS),
        FigureSpec("serve_drafts", "Speculative decoding: drafts accepted, bytes held for "
                   "rollback", "tabs.serve.drafts:serve_drafts", PARAMS),
    ),
    run=RunSpec(
        name="serve_generate", button="Generate", session="core.experiments.serve:new_session",
        close="core.experiments.serve:close_session", start="core.experiments.serve:start",
        final="core.experiments.serve:final", params=PARAMS, text="tabs.serve.common:text",
        live="tabs.serve.common:live", result="core.experiments.serve:result",
        waiting="tabs.serve.common:waiting",
        draws={"serve_experts": "tabs.serve.experts:draw_experts",
               "serve_memory": "tabs.serve.memory:draw_memory",
               "serve_drafts": "tabs.serve.drafts:draw_drafts"},
    ),
    more=("n_new",),  # folded under "More controls"
    presets=(
        Preset("Plain greedy decoding", "No drafts: one byte per forward pass; compare the "
               "expert hit rate with the default.", {"draft_len": 0}),
        Preset("A tiny expert cache", "The fewest slots the model can run with: almost every "
               "expert comes from disk.", {"capacity": 3, "draft_len": 0}),
        Preset("Cache-aware routing", "Prefer resident experts: more hits, and a text that "
               "may change.", {"routing": True, "draft_len": 0}),
        Preset("Half a line of code", "The prompt stops mid-line: the model finishes the "
               "line, then starts the next one with its indentation.",
               {"prompt": "def read(path):\n    with open(path) as f:\n        return "}),
        Preset("A method body", "The prompt stops after “self.”: the model fills in an "
               "attribute the way the Python it learned from does.",
               {"prompt": "class Stack:\n    def __init__(self):\n        self.items = []\n"
                          "\n    def push(self, item):\n        self."}),
        Preset("Records", "A prompt of JSON-like records, which the model learned well and "
               "drafts predict often.",
               {"prompt": '{"id": 1821, "name": "dave", "city": "lima", "age": 68}\n'
                          '{"id": 5886, "name": "dave", "city": "tokyo", "age": 84}\n'
                          '{"id": 3525, "name": "'}),
    ),
)
