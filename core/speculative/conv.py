"""The short-conv window rolls back too: the history the next token's convolution reads.

A KDA layer convolves its pre-conv q|k|v rows with a causal depthwise kernel of W taps, so the
next token needs the last W - 1 rows as history (fla `layers/kda.py`; core.model.layers.KDA).
A verify window pushes one row per position. After n + 1 positions commit, the history is the
last W - 1 rows of (old history ++ the first n + 1 window rows): a cut, no arithmetic. Keeping
the history of all drafted rows instead feeds rejected tokens into the next convolution.
"""

from __future__ import annotations

import torch

from core.errors import ParamError, check_int


def conv_history_after(history: torch.Tensor, rows: torch.Tensor, keep: int) -> torch.Tensor:
    """history [B, W-1, C] and a window's rows [B, D, C] -> history after `keep` rows commit.

    keep in [0, D]; returns a new tensor [B, W-1, C] (the inputs are never mutated).
    """
    if not isinstance(history, torch.Tensor) or history.dim() != 3:
        raise ParamError(f"history must be a tensor [B, W-1, C], got {_shape(history)}")
    if not isinstance(rows, torch.Tensor) or rows.dim() != 3:
        raise ParamError(f"rows must be a tensor [B, D, C], got {_shape(rows)}")
    B, W1, C = history.shape
    if rows.shape[0] != B or rows.shape[2] != C:
        raise ParamError(f"rows must be [B, D, C] = [{B}, D, {C}], got {tuple(rows.shape)}")
    keep = check_int("keep", keep, 0, rows.shape[1])
    joined = torch.cat([history, rows[:, :keep]], dim=1)  # [B, W-1 + keep, C]
    return joined[:, joined.shape[1] - W1:].clone()  # [B, W-1, C]


def _shape(x: object) -> str:
    return str(tuple(x.shape)) if isinstance(x, torch.Tensor) else type(x).__name__
