"""compare_arms on the tiny model: reproducible, and each arm is what its name says.

Pinned: the same seed gives the same four reports (measured times excluded); the stock arm
generates what HybridLM.generate does; prefetch changes nothing but placement (same text,
delta NLL exactly 0, agreement 1, no swaps); routing swaps slots, and each arm's agree equals a
recount of its generation's chosen experts against the top-k of its router scores; the hit
split adds up; the oracle predicts stock perfectly; modelled speed is the documented sum,
worked by hand; bad arguments raise ParamError naming them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from core.errors import ParamError
from core.routing import DISKS, RouteConfig, compare_arms
from core.routing.policy import RoutePolicy
from tests.core.routing.conftest import TINY
from tests.core.routing.test_meters import overlaps

PROMPT = b"12 + 30 = 42\n"
ROUTE = RouteConfig("max_rank", k=2, J=1, M=8)
KW = {"score_bytes": 24, "warmup_bytes": 16}


class _KeptPolicy(RoutePolicy):
    """A RoutePolicy that lists itself, so a test can read the raw calls it saw."""

    made: list[RoutePolicy] = []

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)
        _KeptPolicy.made.append(self)


@pytest.fixture(scope="module")
def policies(tiny, tiny_dir: Path) -> tuple[dict, dict[str, RoutePolicy]]:
    """compare_arms' reports, and each arm's generation policy (compare_arms makes one policy
    per pass: each arm's generation, then its scoring, in ARMS order)."""
    _KeptPolicy.made = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("core.routing.arms.RoutePolicy", _KeptPolicy)
        got = compare_arms(PROMPT, 10, 12, ROUTE, "pilot", seed=3, model=tiny,
                           directory=tiny_dir, **KW)
    return got, dict(zip(got, _KeptPolicy.made[::2], strict=True))


@pytest.fixture(scope="module")
def arms(policies):
    return policies[0]


def test_reproducible_from_the_seed(tiny, tiny_dir: Path, arms) -> None:
    again = compare_arms(PROMPT, 10, 12, ROUTE, "pilot", seed=3, model=tiny, directory=tiny_dir,
                         **KW)
    assert again == arms


def test_stock_and_prefetch_arms(tiny, arms) -> None:
    stock, pre = arms["stock"], arms["prefetch"]
    assert stock.text == tiny.generate(PROMPT, 10) == pre.text
    for a in (stock, pre):
        assert a.delta_nll == 0.0 and a.greedy_agree == 1.0
        assert a.first_divergence is None and a.scored_first_divergence is None
        assert a.swap_rate == 0.0 == a.scored_swap_rate
    assert stock.predictor is None and stock.recall is None and stock.prefetch_reads == 0
    assert pre.predictor == "pilot" and pre.prefetch_reads > 0 and pre.hit_prefetched > 0


def test_every_arm_adds_up(arms) -> None:
    for a in arms.values():
        assert a.generated == len(a.text) == 10 and a.compute_s > 0
        assert a.hit_rate == pytest.approx(a.hit_resident + a.hit_prefetched)
        assert a.hit_rate + a.miss_rate == pytest.approx(1.0)
        assert a.requests == (10 - 1) * TINY.n_layers * TINY.top_k  # the prefill emits one
        assert sum(m.swaps for m in a.layers) == round(a.swap_rate * a.requests)
    assert arms["routing"].swap_rate > 0 and arms["routing"].route.startswith("max_rank")


def test_agree_equals_a_recount_of_the_chosen_experts(policies) -> None:
    """Every decode row the generation routed: its chosen ids against its scores' top-k."""
    arms, made = policies
    for name, a in arms.items():
        calls = [made[name].selections(layer, "decode") for layer in range(TINY.n_layers)]
        counted = sum(sum(overlaps(sc, sel.ids.tolist(), TINY.top_k)) for sc, sel in calls)
        slots = sum(sel.ids.numel() for _, sel in calls)
        assert slots == a.requests, name
        assert a.agree == pytest.approx(counted / slots, rel=1e-12), name
    assert arms["routing"].agree < 1.0


def test_oracle_is_perfect_for_the_prefetch_arm(tiny, tiny_dir: Path) -> None:
    got = compare_arms(PROMPT, 6, 12, ROUTE, "oracle", seed=1, model=tiny, directory=tiny_dir,
                       **KW)
    assert got["prefetch"].recall == 1.0 and got["prefetch"].precision == 1.0


def test_carry_over_starts_the_first_arm_from_the_same_state(tiny, tiny_dir: Path, arms) -> None:
    """restore=False changes what later passes start from, never the first (stock) generation."""
    carried = compare_arms(PROMPT, 10, 12, ROUTE, "pilot", seed=3, restore=False, model=tiny,
                           directory=tiny_dir, **KW)
    a, b = carried["stock"], arms["stock"]
    assert (a.text, a.hit_rate, a.requests, a.bytes_read) == \
        (b.text, b.hit_rate, b.requests, b.bytes_read)


def test_modelled_speed_by_hand(arms) -> None:
    """0.01 s compute for 10 tokens on 4 layers: 0.25 ms per layer. NVMe: 3.5 GB/s, 20 us a
    read. 6 demand reads of 6 MB: 6 * 20 us + 6e6 / 3.5e9 = 1.834 ms. Two prefetches of 1 read
    and 1 MB: 20 us + 0.2857 ms = 0.3057 ms each, 0.0557 ms late each. Total 0.01 + 0.001834
    + 0.000111 = 0.011946 s, 1.1946 ms a token."""
    r = replace(arms["both"], compute_s=0.01, demand_reads=6, demand_bytes=6_000_000,
                issues=((1, 1_000_000), (1, 1_000_000)))
    assert r.lateness_s("NVMe") == pytest.approx(2 * (20e-6 + 1e6 / 3.5e9 - 0.00025))
    assert r.seconds_per_token("NVMe") == pytest.approx(
        (0.01 + 6 * 20e-6 + 6e6 / 3.5e9 + r.lateness_s("NVMe")) / 10)
    assert r.tokens_per_s("RAM") > r.tokens_per_s("NVMe") > r.tokens_per_s("HDD")
    assert set(DISKS) == {"HDD", "SATA SSD", "NVMe", "RAM"}
    with pytest.raises(ParamError, match="disk must be one of"):
        r.tokens_per_s("tape")


@pytest.mark.parametrize(("args", "match"), [
    ((b"", 4, 5, ROUTE, "pilot"), "prompt must be non-empty bytes"),
    ((PROMPT, 0, 5, ROUTE, "pilot"), r"n_new must be in \[1, 4096\]"),
    ((PROMPT, 4, 2, ROUTE, "pilot"), r"capacity must be in \[3, 32\]"),
    ((PROMPT, 4, 5, "max_rank", "pilot"), "route must be a RouteConfig"),
    ((PROMPT, 4, 5, ROUTE, "lookahead"), "predictor must be one of"),
    ((PROMPT, 4, 5, RouteConfig("max_rank", k=2, M=12), "pilot"), r"M must be in \[k, E\]"),
])
def test_bad_arguments(tiny, tiny_dir: Path, args, match: str) -> None:
    with pytest.raises(ParamError, match=match):
        compare_arms(*args, model=tiny, directory=tiny_dir, **KW)
