"""Speculative runs reduced to counts: rows carry the engine's numbers, rollbacks add up.

Pinned: each PassRow carries its VerifyStep's counts; a pass rolls back (replays accepted + 1
positions) exactly when it rejected a draft, and only then moves bytes: every KDA layer's S
read and written plus each replayed position's held record (what the Engine lesson's "fixed
plus per position" rests on); the passes emit the n_new - 1 bytes after the prefill's; a spec
run's text is plain greedy decoding's; the prompts are held-out corpus text ending at a line
break; SpecSweep refuses a run whose text differs from plain greedy, a missing or duplicated
(kind, gamma), and bad knobs name the parameter.
"""

from __future__ import annotations

import dataclasses

import pytest

from core.errors import ParamError
from core.experiments.engine import SpecRun, SpecSweep, plain_text, rows, spec_run
from core.model.corpus_documents import split_documents
from core.model.corpus_shipped import read_documents
from core.serve.compare import POOL_PAGES
from core.serve.engine import Engine
from core.serve.prompts import KINDS, MAX_PROMPT, PROMPTS, prompt

pytestmark = pytest.mark.usefixtures("one_thread")
N_NEW = 12


def test_rows_follow_the_engine_and_rollbacks_follow_rejections(shipped):
    d = shipped.dims
    report = Engine(shipped, POOL_PAGES, prefix_cache=False).generate(
        prompt("records"), N_NEW, draft_len=3)
    table = rows(report)
    assert len(table) == len(report.verify) > 0
    assert sum(p.emitted for p in table) == N_NEW - 1  # the first byte is the prefill's
    assert any(p.replayed for p in table) and any(p.drafted for p in table)
    state = d.kda_heads * d.kda_head_dim**2 * d.bytes_per_param
    for step, p in zip(report.verify, table, strict=True):
        assert (p.held_bytes, p.snapshot_bytes, p.moved_bytes) == (
            step.replay_bytes, step.snapshot_bytes, step.replay_moved)
        rejected = p.accepted < p.drafted
        assert p.replayed == (p.accepted + 1 if rejected else 0)
        per_position = p.held_bytes // p.window  # every KDA layer's record of one position
        want = 2 * d.n_kda * state + p.replayed * per_position if rejected else 0
        assert p.moved_bytes == want


def test_spec_run_is_plain_greedy_and_counts_add_up(shipped):
    r = spec_run(shipped, "code", 2, N_NEW)
    assert r.text == plain_text(shipped, "code", N_NEW) == shipped.generate(r.prompt, N_NEW)
    assert r.drafted == sum(p.drafted for p in r.passes) and r.accepted <= r.drafted
    assert all(0 <= p.accepted <= p.drafted <= 2 for p in r.passes)
    assert r.acceptance == r.accepted / r.drafted
    assert r.bytes_per_verify_pass == (N_NEW - 1) / len(r.passes)
    assert r.rollbacks == sum(p.rejected > 0 for p in r.passes)


def test_prompts_are_held_out_text_ending_a_line():
    _, held = split_documents(list(read_documents()))
    held_sources = {doc.source: doc.text.encode() for doc in held}
    for src in PROMPTS:
        p = prompt(src.kind)
        assert 0 < len(p) <= MAX_PROMPT and p.endswith(b"\n")
        assert p.startswith(src.anchor.encode()) and p in held_sources[src.source]
    assert KINDS == ("code", "records", "prose")


def _fake(kind: str, gamma: int, text: bytes = b"ab"):
    return SpecRun(kind=kind, gamma=gamma, n_new=2, prompt=b"p", text=text, passes=())


def test_sweep_checks_its_runs():
    ok = SpecSweep.of([_fake("code", 1), _fake("code", 2)], {"code": b"ab"})
    assert ok.gammas == (1, 2) and ok.run("code", 2).gamma == 2
    with pytest.raises(AssertionError, match="differs"):
        SpecSweep.of([_fake("code", 1, b"xx")], {"code": b"ab"})
    with pytest.raises(ParamError, match="exactly once"):
        SpecSweep.of([_fake("code", 1), _fake("code", 1)], {"code": b"ab"})
    with pytest.raises(ParamError, match="exactly once"):
        SpecSweep.of([_fake("code", 1), _fake("prose", 2)], {"code": b"ab", "prose": b"ab"})
    with pytest.raises(ParamError, match="plain"):
        SpecSweep.of([_fake("code", 1)], {})
    r = dataclasses.replace(_fake("code", 1), n_new=3)
    with pytest.raises(ParamError, match="n_new"):
        SpecSweep.of([_fake("code", 2), r], {"code": b"ab"})


@pytest.mark.parametrize(("call", "name"), [
    (lambda m: spec_run(m, "poetry", 2, 8), "kind"),
    (lambda m: spec_run(m, "code", 0, 8), "gamma"),
    (lambda m: spec_run(m, "code", 9, 8), "gamma"),
    (lambda m: spec_run(m, "code", 2, 1), "n_new"),
    (lambda m: plain_text(m, "code", 10_000), "n_new"),
])
def test_bad_knobs_name_the_parameter(shipped, call, name):
    with pytest.raises(ParamError, match=name):
        call(shipped)
