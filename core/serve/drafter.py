"""Prompt-lookup drafting: guess the next bytes from the request's own history, no draft model.

`PromptLookup.propose(history, n)` takes the longest suffix of the history (max_ngram bytes down
to min_ngram) that also occurs earlier, picks its LATEST earlier occurrence, and proposes the
bytes that followed it. When the continuation runs into the end of the history it keeps
copying from the proposal itself, so a period-p repetition drafts n bytes, not p. No match: no
draft (the engine then runs a plain step). Proposals are deterministic in the history.

Drafts cost nothing to make and are only guesses: the model's verify pass decides, so a wrong
guess changes speed, never the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from core.errors import ParamError, check_int

MAX_NGRAM = 64


@runtime_checkable
class Drafter(Protocol):
    def propose(self, history: bytes | bytearray, n: int) -> bytes:
        """Up to n bytes guessed to follow `history` (the prompt and every emitted byte)."""
        ...


@dataclass(frozen=True, slots=True)
class PromptLookup:
    max_ngram: int = 4
    min_ngram: int = 1

    def __post_init__(self) -> None:
        check_int("max_ngram", self.max_ngram, 1, MAX_NGRAM)
        check_int("min_ngram", self.min_ngram, 1, self.max_ngram)

    def propose(self, history: bytes | bytearray, n: int) -> bytes:
        """Up to n draft bytes continuing `history` (empty when no suffix recurs)."""
        if not isinstance(history, (bytes, bytearray)):
            raise ParamError(f"history must be bytes, got {type(history).__name__}")
        n = check_int("n", n, 0, 1 << 16)
        L = len(history)
        if n == 0 or L < 2:
            return b""
        for size in range(min(self.max_ngram, L - 1), self.min_ngram - 1, -1):
            at = history.rfind(history[L - size :], 0, L - 1)  # an occurrence ending before L
            if at >= 0:
                seq = bytearray(history)
                j = at + size
                while len(seq) < L + n:
                    seq.append(seq[j])  # j < len(seq) always: copies from the match onward
                    j += 1
                return bytes(seq[L:])
        return b""
