"""The short-conv window rolls back with the state.

Pinned against the tiny model's real KDA layer (core.model.layers.KDA, conv width 4): cutting
the history at n + 1 committed rows (core.speculative.conv) equals the history of stepping only the
committed tokens, bit for bit, and so does the next token's output; leaving the history at the
drafted rows changes that output whenever a draft was rejected.
"""

from __future__ import annotations

import pytest
import torch

from core.errors import ParamError
from core.speculative.conv import conv_history_after
from core.speculative.oracles import check_conv


def test_cut_by_hand():
    """W - 1 = 3, rows 10..13, keep 2: history [1, 2, 3] ++ [10, 11] -> [3, 10, 11]."""
    hist = torch.tensor([1.0, 2.0, 3.0]).view(1, 3, 1)
    rows = torch.tensor([10.0, 11.0, 12.0, 13.0]).view(1, 4, 1)
    assert conv_history_after(hist, rows, 2).flatten().tolist() == [3.0, 10.0, 11.0]
    assert conv_history_after(hist, rows, 0).flatten().tolist() == [1.0, 2.0, 3.0]
    assert conv_history_after(hist, rows, 4).flatten().tolist() == [11.0, 12.0, 13.0]


def test_cut_never_aliases_its_inputs():
    hist, rows = torch.zeros(1, 3, 2), torch.ones(1, 2, 2)
    out = conv_history_after(hist, rows, 0)
    out += 5
    assert hist.abs().sum() == 0


@pytest.mark.parametrize(("draft_len", "accepted"), [(1, 0), (3, 1), (4, 2), (4, 4), (8, 3)])
def test_cut_equals_a_real_layer_stepped_over_the_committed_tokens(draft_len, accepted):
    c = check_conv(draft_len, accepted)
    assert c.conv_size == 4 and c.commits == accepted + 1 and c.window == draft_len + 1
    assert c.cut_history.shape == c.committed_history.shape == (1, 3, c.cut_history.shape[2])
    assert torch.equal(c.cut_history, c.committed_history)
    assert torch.equal(c.next_cut, c.next_committed)
    off = (c.next_uncut - c.next_committed).abs().max().item()
    if accepted < draft_len:  # a rejected draft's row would leak into the next convolution
        assert off > 1e-3
    else:  # everything committed: nothing to cut
        assert off == 0.0


@pytest.mark.parametrize(("args", "name"), [
    ((torch.zeros(3, 1), torch.zeros(1, 2, 1), 1), "history"),
    ((torch.zeros(1, 3, 1), torch.zeros(2, 1), 1), "rows"),
    ((torch.zeros(1, 3, 1), torch.zeros(1, 2, 4), 1), "rows"),
    ((torch.zeros(1, 3, 1), torch.zeros(1, 2, 1), 3), "keep"),
])
def test_bad_inputs(args, name):
    with pytest.raises(ParamError, match=name):
        conv_history_after(*args)
