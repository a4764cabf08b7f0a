"""Gradio's per-session state, without a copy of every block's config made up front.

Gradio (6.31) builds, for each new session, `SessionState.config_values`: the config dict of
every block of the app, 690 here. It is read only to answer `/gradio_api/deep_link` (the
session's `components`) and kept current as events update blocks; nothing else reads it. For
this lab that cost 54 ms of CPU and 1.17 MiB per session (100 sessions built in one process),
kept until 10,000 sessions have come and gone: a class's 30 pages, each reload a new session,
grow the server by tens of MiB an hour, and a room opening its pages at once queues ~1.6 s of
this work. Gradio has no option for it, hence this subclass (installed by `install()`, before
the app serves: app.py build_app):

  LeanSessionState   starts with no block configs (0.05 ms, 0.04 MiB a session) and builds
                     none while events run: Gradio's postprocess rebuilds a block's config for
                     every input it reads, every State it sets and every update it applies (a
                     gr.skip() included: a new component, its config and its API schema,
                     ~0.4 ms each; 11% of the server's samples while a room of 30 streamed
                     Generate, with py-spy). Here each of those only notes which block object
                     and which value the entry is to be built from, and `components` builds
                     the entries when a deep link asks, so a deep link gets what Gradio's own
                     SessionState gives (tests/tabs/test_session_state.py holds the two equal).

Only the session's first lookup in Gradio's StateHolder creates one; the pinned Gradio version
(requirements.txt) is the one this was read against.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

from gradio import state_holder

_NO_VALUE = object()


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
        # key -> [the object its config is built from, the value then set in it or _NO_VALUE]:
        # what Gradio's own class would have computed at once, in the same order of events
        self._pending: dict[int, list[Any]] = {}

    def _rebuild(self, key: int, source: object) -> None:
        self.config_values.pop(key, None)
        self._pending[key] = [source, _NO_VALUE]

    def __setitem__(self, key: int, value: Any) -> None:
        from gradio.components import State  # Gradio's own __setitem__, its config deferred

        block = self.blocks_config.blocks.get(key)
        if isinstance(block, State):
            self._state_ttl[key] = (block.time_to_live, datetime.datetime.now())
            self.state_data[key] = value
        else:
            self.blocks_config.blocks[key] = value
        if block:
            self._rebuild(key, block)  # the block as it was before: Gradio's order

    def _update_config(self, key: int) -> None:
        source = self[key]
        if source is not None:
            self._rebuild(key, source)

    def _update_value_in_config(self, key: int, value: Any) -> None:
        if key in self._pending:
            self._pending[key][1] = value
        elif key in self.config_values:
            if "props" in self.config_values[key]:
                self.config_values[key]["props"]["value"] = value
        else:
            self._pending[key] = [self.blocks_config.blocks[key], value]

    @property
    def components(self) -> Iterator[dict]:
        for k, (source, value) in list(self._pending.items()):
            config = self.blocks_config.config_for_block(k, [], source)
            if value is not _NO_VALUE and "props" in config:
                config["props"]["value"] = value
            self.config_values[k] = config
        self._pending.clear()
        for k, v in self.blocks_config.blocks.items():
            if k in self._app_blocks and k not in self.config_values:
                self.config_values[k] = self.blocks_config.config_for_block(k, [], v)
        yield from (c for c in self.config_values.values() if c)


def install() -> None:
    """New sessions get a LeanSessionState (idempotent)."""
    state_holder.SessionState = LeanSessionState  # type: ignore[misc]
