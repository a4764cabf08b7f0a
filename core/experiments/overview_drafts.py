"""Overview, a counterfactual: the tab's request decoded with drafts that are always right.

KnownText is a drafter that proposes the bytes plain greedy decoding writes next (the request's
own greedy continuation, computed first), so no draft is ever rejected. Everything else is the
tab's run: the engine, its adaptive draft budget (which then only grows, up to gamma), the
expert cache, the warm prefix. Set beside the tab's run (prompt-lookup drafts, some rejected)
it separates what rejected drafts cost in expert loads from what grouping positions into
verify passes costs.

always_right(draft_len, kind, capacity, warm) -> RequestPath   (single-flight, read-only)
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ParamError
from core.experiments.flight import single_flight
from core.experiments.overview import RequestPath, serve_path
from core.experiments.scenes import N_NEW
from core.experiments.shipped import model as shipped_model
from core.serve.prompts import prompt


@dataclass(frozen=True, slots=True)
class KnownText:
    """Proposes the continuation of `text` after the history (which must be a prefix of it)."""

    text: bytes

    def propose(self, history: bytes | bytearray, n: int) -> bytes:
        h = bytes(history)
        if not self.text.startswith(h):
            raise ParamError("history left the known text: the drafts are not greedy's")
        return self.text[len(h): len(h) + n]


@single_flight(16)
def always_right(draft_len: int, kind: str, capacity: int, warm: bool) -> RequestPath:
    """The tab's request (N_NEW bytes) with drafts that are always right."""
    model = shipped_model()
    text = prompt(kind)
    known = KnownText(text + model.generate(text, N_NEW))
    return serve_path(model, kind, draft_len, capacity, warm, clusters=1, n_new=N_NEW,
                      drafter=known)
