"""Gradio's per-session state, without a copy of every block's config made up front.

Gradio (6.31) builds, for each new session, `SessionState.config_values`: the config dict of
every block of the app, 690 here. It is read only to answer `/gradio_api/deep_link` (the
session's `components`) and kept current as events update blocks; nothing else reads it. For
this lab that cost 54 ms of CPU and 1.17 MiB per session (100 sessions built in one process),
kept until 10,000 sessions have come and gone: a class's 30 pages, each reload a new session,
grow the server by tens of MiB an hour, and a room opening its pages at once queues ~1.6 s of
this work. Gradio has no option for it, hence this subclass (installed by `install()`, before
the app serves: app.py build_app):

  LeanSessionState   starts with no block configs (0.05 ms, 0.04 MiB a session); Gradio's own
                     code fills an entry when an event updates that block, as before, and
                     `components` builds the missing ones when a deep link asks, so a deep link
                     gets what Gradio's own SessionState gives (tests/tabs/test_session_state.py
                     holds the two equal).

Only the session's first lookup in Gradio's StateHolder creates one; the pinned Gradio version
(requirements.txt) is the one this was read against.
"""

from __future__ import annotations

from collections.abc import Iterator

from gradio import state_holder


class _NoBlocks:
    """What SessionState.__init__ reads of the Blocks (its default config, its blocks), with no
    blocks: the up-front copy is then empty."""

    def __init__(self, blocks: object) -> None:
        self.default_config = blocks.default_config  # type: ignore[attr-defined]
        self.blocks: dict = {}


class LeanSessionState(state_holder.SessionState):
    def __init__(self, blocks: object) -> None:
        super().__init__(_NoBlocks(blocks))
        self._app_blocks = blocks.blocks  # type: ignore[attr-defined]

    @property
    def components(self) -> Iterator[dict]:
        for k, v in self.blocks_config.blocks.items():
            if k in self._app_blocks and k not in self.config_values:
                self.config_values[k] = self.blocks_config.config_for_block(k, [], v)
        yield from (c for c in self.config_values.values() if c)


def install() -> None:
    """New sessions get a LeanSessionState (idempotent)."""
    state_holder.SessionState = LeanSessionState  # type: ignore[misc]
