"""ClassEngine: one engine and one step thread serve a room of seats.

Oracle: every seat's text equals HybridLM.generate of its own prompt (the engine is
batch-invariant), whatever the other seats send and when. Rules: one request in flight per
seat; a bounded queue that loses nothing; Stop (closing the stream) cancels at once and leaves
only the prefix cache's pages; prefixes are a seat's own unless shared; the room's counts are
counts (the shared loads are the step's union, each once)."""

from __future__ import annotations

import threading

import pytest

from core.serve.class_engine import ClassBusy, ClassEngine, EngineBusy
from core.serve.limits import MAX_SESSION_NEW
from core.serve.live import ServeConfig

PROMPTS = [b"def parse(argv):\n    for name in argv:\n        print(name)\n    return 0\n",
           b"import os\nimport sys\n\n\ndef main(argv):\n    for name in argv:\n",
           b'{"id": 1821, "name": "dave", "city": "lima", "age": 68}\n{"id": 5886, "name": ',
           b"class Cache:\n    def __init__(self, size):\n        self.size = size\n"]
N_NEW = 12


def _cfg(prompt: bytes, draft_len: int = 0, n_new: int = N_NEW) -> ServeConfig:
    return ServeConfig(prompt, n_new=n_new, draft_len=draft_len, every=1)


@pytest.fixture
def room(shipped):
    eng = ClassEngine(shipped, capacity=32, max_batch=4, max_waiting=8)
    yield eng
    eng.close()


def _held(room: ClassEngine) -> int:
    return sum(room.engine.cache.held_pages().values())


def test_every_seat_gets_its_solo_bytes_while_the_room_shares_steps(shipped, room):
    outs: dict[int, bytes] = {}
    rooms = []

    def student(i: int) -> None:
        seat = room.seat()
        for snap in room.serve(seat, _cfg(PROMPTS[i], draft_len=(0, 3)[i % 2])):
            rooms.append(snap.room)
        outs[i] = snap.text

    threads = [threading.Thread(target=student, args=(i,)) for i in range(len(PROMPTS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert outs == {i: shipped.generate(p, N_NEW) for i, p in enumerate(PROMPTS)}
    assert max(r.running for r in rooms) >= 2, "the seats never shared a step"
    assert room.engine.pool.num_used == _held(room)  # only the prefix cache holds pages


def test_one_request_per_seat_and_a_bounded_queue_that_loses_nothing(shipped):
    room = ClassEngine(shipped, capacity=32, max_batch=1, max_waiting=1)
    try:
        a, b, c = room.seat(), room.seat(), room.seat()
        first = room.serve(a, _cfg(PROMPTS[0], n_new=MAX_SESSION_NEW))
        next(first)  # a runs (its first byte is out) and holds the batch's one seat
        with pytest.raises(ClassBusy, match="already has request"):
            room.serve(a, _cfg(PROMPTS[1]))
        second = room.serve(b, _cfg(PROMPTS[1]))  # waits behind a (a page's serve is not
        # held up while the room steps: it once waited until the room went idle)
        assert a.rid is not None, "a finished before b was queued"
        with pytest.raises(EngineBusy, match=r"1 requests waiting \(max_waiting=1\)"):
            room.serve(c, _cfg(PROMPTS[2]))
        assert list(first)[-1].text == shipped.generate(PROMPTS[0], MAX_SESSION_NEW)
        assert list(second)[-1].text == shipped.generate(PROMPTS[1], N_NEW)
        assert list(room.serve(c, _cfg(PROMPTS[2])))[-1].text == shipped.generate(PROMPTS[2],
                                                                                   N_NEW)
        assert list(room.serve(a, _cfg(PROMPTS[3])))[-1].done  # a seat serves again after
    finally:
        room.close()


def test_stop_cancels_at_once_and_the_others_go_on(shipped, room):
    a, b = room.seat(), room.seat()
    stopped = room.serve(a, _cfg(PROMPTS[0], n_new=60))
    other = room.serve(b, _cfg(PROMPTS[1]))
    next(stopped)  # it has started
    stopped.close()  # Stop: the generator closes
    assert a.rid is None and room.cancel(a) is False
    assert list(other)[-1].text == shipped.generate(PROMPTS[1], N_NEW)
    assert room.engine.pool.num_used == _held(room)


@pytest.mark.parametrize("shared", [False, True])
def test_a_prefix_is_a_seats_own_unless_shared(shipped, shared):
    room = ClassEngine(shipped, capacity=32, shared_prefix=shared)
    try:
        prompt = PROMPTS[1] * 3  # two full 64-token blocks
        a, b = room.seat(), room.seat()
        first = list(room.serve(a, _cfg(prompt)))[-1]
        other = list(room.serve(b, _cfg(prompt)))[-1]
        again = list(room.serve(a, _cfg(prompt)))[-1]
        assert first.reused_tokens == 0 and again.reused_tokens == 128
        assert other.reused_tokens == (128 if shared else 0)
        assert first.text == other.text == again.text == shipped.generate(prompt, N_NEW)
        assert again.room.shared_prefix is shared
        assert again.room.reused_tokens == (256 if shared else 128)
        assert again.room.prompt_tokens == 3 * len(prompt)
    finally:
        room.close()


def test_the_room_counts_a_shared_load_once(shipped, room):
    """RoomView.loads is the step's distinct experts that were not resident as it began: at
    most the union, at least the most any one seat loaded that step."""
    seats = [room.seat() for _ in range(3)]
    streams = [room.serve(s, _cfg(p)) for s, p in zip(seats, PROMPTS, strict=False)]
    for st in streams:
        for snap in st:
            r = snap.room
            assert 0 <= r.loads <= sum(r.distinct_experts)
            assert sum(n for _, n in r.phases) <= r.running + len(seats)
            assert r.pages_used <= r.pages_total


def test_bad_input_names_the_parameter(room):
    from core.errors import ParamError

    with pytest.raises(ParamError, match="seat"):
        room.serve("me", _cfg(PROMPTS[0]))
    with pytest.raises(ParamError, match="n_new"):
        room.serve(room.seat(), ServeConfig(PROMPTS[0], n_new=0))
