"""Per-class admission budgets: a weighted concurrency cap per class, in reject or queue mode.

Named honestly: a budget is a concurrency cap in weight units. A request of class k holds
weights[k] units from admission until it finishes; it is admitted when
usage[k] + weights[k] <= budgets[k] (the boundary admits, one unit over refuses).

Modes:
  off    - no cap; usage is still counted.
  reject - over budget is refused at once.
  queue  - over budget waits in a bounded FIFO per class (deferred); when the queue already
           holds queue_limit requests the new one is refused. A release admits from the head.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from core.errors import ParamError, check_choice, check_int

CLASSES = ("short", "long")
MODES = ("off", "reject", "queue")
ADMIT, QUEUE, REJECT = "admit", "queue", "reject"


def class_index(klass: int | str) -> int:
    """0 for short, 1 for long; accepts the index or the name."""
    if isinstance(klass, str):
        return CLASSES.index(check_choice("klass", klass, CLASSES))  # type: ignore[arg-type]
    return check_int("klass", klass, 0, len(CLASSES) - 1)


@dataclass(frozen=True, slots=True)
class BudgetConfig:
    """budgets and weights are (short, long); queue_limit bounds each class's wait queue."""

    mode: str = "off"
    budgets: tuple[int, int] = (64, 96)
    weights: tuple[int, int] = (1, 3)
    queue_limit: int = 64

    def __post_init__(self) -> None:
        check_choice("mode", self.mode, MODES)
        for name, pair in (("budgets", self.budgets), ("weights", self.weights)):
            if len(pair) != len(CLASSES):
                raise ParamError(f"{name} must be a (short, long) pair, got {pair!r}")
        for k, cls in enumerate(CLASSES):
            w = check_int(f"weights[{cls}]", self.weights[k], 1, 1_000_000)
            check_int(f"budgets[{cls}]", self.budgets[k], w, 10**12)
        check_int("queue_limit", self.queue_limit, 0, 10**9)


class BudgetController:
    """Explicit state: usage and wait queue per class, plus decision counters."""

    def __init__(self, config: BudgetConfig | None = None) -> None:
        self.config = config or BudgetConfig()
        self.mode = self.config.mode
        self.budgets = list(self.config.budgets)
        self.weights = list(self.config.weights)
        self.queue_limit = self.config.queue_limit
        self.usage = [0] * len(CLASSES)
        self.queues: list[deque[int]] = [deque() for _ in CLASSES]
        self.num_admitted = [0] * len(CLASSES)
        self.num_queued = [0] * len(CLASSES)
        self.num_rejected = [0] * len(CLASSES)

    def can_admit(self, klass: int | str) -> bool:
        """True when usage + weight <= budget (always in mode off)."""
        k = klass if type(klass) is int else class_index(klass)
        return self.mode == "off" or self.usage[k] + self.weights[k] <= self.budgets[k]

    def offer(self, klass: int | str, item: int = -1) -> str:
        """Decide and commit for a new request: ADMIT (usage taken), QUEUE (item held) or REJECT."""
        k = klass if type(klass) is int else class_index(klass)
        if self.mode == "off" or (
            self.usage[k] + self.weights[k] <= self.budgets[k] and not self.queues[k]
        ):
            self.usage[k] += self.weights[k]
            self.num_admitted[k] += 1
            return ADMIT
        if self.mode == "queue" and len(self.queues[k]) < self.queue_limit:
            self.queues[k].append(item)
            self.num_queued[k] += 1
            return QUEUE
        self.num_rejected[k] += 1
        return REJECT

    def release(self, klass: int | str) -> list[int]:
        """A request of this class finished: free its units, admit queued items that now fit."""
        k = klass if type(klass) is int else class_index(klass)
        if self.usage[k] < self.weights[k]:
            raise ParamError(f"klass {CLASSES[k]}: release without a matching admission")
        self.usage[k] -= self.weights[k]
        queue = self.queues[k]
        if not queue:
            return []
        admitted: list[int] = []
        while queue and self.usage[k] + self.weights[k] <= self.budgets[k]:
            admitted.append(queue.popleft())
            self.usage[k] += self.weights[k]
            self.num_admitted[k] += 1
        return admitted

    def snapshot(self) -> dict[str, dict[str, int]]:
        """Read-only view per class: usage, budget, queued now, admitted/queued/rejected totals."""
        return {
            cls: {
                "usage": self.usage[k],
                "budget": self.budgets[k],
                "waiting": len(self.queues[k]),
                "admitted": self.num_admitted[k],
                "queued": self.num_queued[k],
                "rejected": self.num_rejected[k],
            }
            for k, cls in enumerate(CLASSES)
        }
