"""A scenario run as seen part-way through: its steps and counter windows up to a token.

Read from the run's records (every Step keeps its window's stats right after it and the loads
it published), never by driving the cache again. Token 0 is the opening group ("probe" or
"setup"); token t is the scheduled token "t<t>"; a prefill chunk "c<c>" of the pressure
scenario starts at its first token.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import check_int
from core.experts.scenarios.presets import chunk_tokens
from core.experts.scenarios.records import ScenarioRun, Window


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    token: int  # as asked (may lie past the run's last token)
    last_token: int  # the run's last scheduled token
    shown: int  # steps shown: run.steps[:shown]
    total: int  # steps in the run
    windows: tuple[Window, ...]  # closed windows whole, the open one as of the last shown step

    @property
    def complete(self) -> bool:
        return self.shown == self.total

    @property
    def current(self) -> int:
        """Index of the last shown step (-1: none yet)."""
        return self.shown - 1


def step_tokens(run: ScenarioRun) -> tuple[int, ...]:
    """The token each step belongs to, in step order (non-decreasing)."""
    chunk = chunk_tokens(run.slots, run.topk)
    out = []
    for st in run.steps:
        g = st.group
        if g[0] == "t" and g[1:].isdigit():
            out.append(int(g[1:]))
        elif g[0] == "c" and g[1:].isdigit():
            out.append((int(g[1:]) - 1) * chunk + 1)
        else:
            out.append(0)
    return tuple(out)


def progress(run: ScenarioRun, token: int) -> Progress:
    """The run after every step of tokens 0..token."""
    token = check_int("token", token, 0, 1 << 20)
    tokens = step_tokens(run)
    shown = sum(t <= token for t in tokens)
    windows = []
    for w in run.windows:
        if w.first >= shown:
            break
        if w.last < shown:
            windows.append(w)
            continue
        part = run.steps[w.first:shown]
        windows.append(Window(index=w.index, first=w.first, last=shown - 1,
                              published=sum(s.published for s in part),
                              failed=sum(len(s.failed) for s in part), stats=part[-1].stats))
    return Progress(token=token, last_token=run.schedule, shown=shown, total=len(run.steps),
                    windows=tuple(windows))
