"""BudgetController: the exact boundary (usage + weight == budget admits, one unit over refuses),
reject vs queue modes, and FIFO admission from the queue. Pins the seed demo's budget, which was a
silent concurrency cap with no queue."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import ParamError
from core.fleet.budgets import ADMIT, QUEUE, REJECT, BudgetConfig, BudgetController, class_index


def _ctl(mode="reject", budgets=(8, 9), weights=(1, 3), queue_limit=4) -> BudgetController:
    return BudgetController(BudgetConfig(mode, budgets, weights, queue_limit))


class TestBoundary:
    def test_exactly_at_budget_is_admitted_one_over_is_refused(self):
        ctl = _ctl(budgets=(8, 9))
        assert [ctl.offer("short") for _ in range(8)] == [ADMIT] * 8  # usage 7 + 1 == 8
        assert ctl.usage[0] == 8
        assert ctl.offer("short") == REJECT
        assert [ctl.offer("long") for _ in range(3)] == [ADMIT] * 3  # usage 6 + 3 == 9
        assert ctl.offer("long") == REJECT

    def test_weight_that_overshoots_by_one_unit_is_refused(self):
        ctl = _ctl(budgets=(8, 11))
        assert [ctl.offer(1) for _ in range(4)] == [ADMIT, ADMIT, ADMIT, REJECT]  # 9 + 3 = 12 > 11
        assert ctl.can_admit(1) is False
        ctl.release(1)
        assert ctl.can_admit(1) is True

    def test_classes_are_isolated(self):
        ctl = _ctl(budgets=(2, 3))
        assert ctl.offer("long") == ADMIT and ctl.offer("long") == REJECT
        assert ctl.offer("short") == ADMIT and ctl.offer("short") == ADMIT

    def test_release_without_admission_raises(self):
        with pytest.raises(ParamError, match="release"):
            _ctl().release("short")


class TestModes:
    def test_off_never_rejects(self):
        ctl = _ctl(mode="off", budgets=(1, 3))
        assert all(ctl.offer("long") == ADMIT for _ in range(100))
        assert ctl.usage[1] == 300

    def test_queue_mode_rejects_nothing_below_its_bound(self):
        ctl = _ctl(mode="queue", budgets=(2, 3), queue_limit=5)
        decisions = [ctl.offer("short", i) for i in range(7)]
        assert decisions == [ADMIT, ADMIT] + [QUEUE] * 5
        assert ctl.offer("short", 7) == REJECT
        assert ctl.num_rejected == [1, 0]

    def test_queue_admits_in_fifo_order_on_release(self):
        ctl = _ctl(mode="queue", budgets=(1, 3), queue_limit=5)
        ctl.offer(0, 10)
        for i in (11, 12, 13):
            assert ctl.offer(0, i) == QUEUE
        assert ctl.release(0) == [11]
        assert ctl.release(0) == [12]
        assert ctl.snapshot()["short"]["waiting"] == 1

    def test_new_arrival_waits_behind_the_queue(self):
        """Room appearing while others wait goes to the head of the queue, not the newcomer."""
        ctl = _ctl(mode="queue", budgets=(3, 3), queue_limit=5)
        ctl.offer(1, 1)
        assert ctl.offer(1, 2) == QUEUE
        ctl.budgets[1] = 6  # as if a larger budget had been configured
        assert ctl.offer(1, 3) == QUEUE

    @settings(max_examples=80, deadline=None)
    @given(
        mode=st.sampled_from(["reject", "queue"]),
        budget=st.integers(3, 12),
        limit=st.integers(0, 6),
        ops=st.lists(st.tuples(st.booleans(), st.integers(0, 1)), max_size=80),
    )
    def test_usage_never_exceeds_budget(self, mode, budget, limit, ops):
        ctl = _ctl(mode=mode, budgets=(budget, budget), queue_limit=limit)
        held = [0, 0]
        for is_offer, k in ops:
            if is_offer:
                waiting = len(ctl.queues[k])
                d = ctl.offer(k)
                held[k] += d == ADMIT
                if d == REJECT and mode == "queue":
                    assert waiting == limit, "queue mode rejected below its bound"
                if mode == "reject":
                    assert d != QUEUE
            elif held[k]:
                held[k] += len(ctl.release(k)) - 1
            assert ctl.usage[k] == held[k] * ctl.weights[k] <= ctl.budgets[k]


class TestValidation:
    @pytest.mark.parametrize(
        "kwargs, match",
        [
            ({"mode": "drop"}, "mode"),
            ({"budgets": (8, 2)}, r"budgets\[long\]"),
            ({"weights": (0, 3)}, r"weights\[short\]"),
            ({"budgets": (8,)}, "budgets"),
            ({"queue_limit": -1}, "queue_limit"),
        ],
    )
    def test_bad_config_names_the_parameter(self, kwargs, match):
        with pytest.raises(ParamError, match=match):
            BudgetConfig(**kwargs)

    def test_class_names_and_indices(self):
        assert class_index("short") == 0 and class_index(1) == 1
        with pytest.raises(ParamError, match="klass"):
            class_index("medium")
        with pytest.raises(ParamError, match="klass"):
            class_index(2)
