"""What a shared engine keeps apart and what it tells each request, against independent runs:

  * a salted request reuses and publishes prefixes only among requests with its salt (the
    reuse a student could otherwise read as "someone typed this"); its bytes stay its solo
    bytes either way;
  * a step's per-request experts (StepReport.experts_of) are the experts that request's own
    tokens choose when it runs alone (HybridLM.generate's routing, bit-identical under the
    invariant kernels), and together they make the step's union.
"""

from __future__ import annotations

import pytest

from core.serve import Engine
from tests.core.model.conftest import tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")
PROMPT = (b"def load(path):\n    with open(path) as f:\n        return f.read()\n") * 4


@pytest.fixture(scope="module")
def model():
    return tiny_model(7)


def _reused(eng: Engine, prompt: bytes, salt: bytes | None) -> tuple[int, bytes]:
    rid = eng.submit(prompt, 4, salt=salt)
    report = eng.run()[rid]
    return report.prefill.reused_tokens, report.text


def test_a_salt_keeps_prefixes_among_requests_that_share_it(model):
    solo = model.generate(PROMPT, 4)
    eng = Engine(model, 400)
    assert _reused(eng, PROMPT, b"alice") == (0, solo)
    assert _reused(eng, PROMPT, b"bob") == (0, solo)  # another salt: nothing to reuse
    reused, text = _reused(eng, PROMPT, b"alice")  # alice's own prefix comes back
    assert reused == len(PROMPT) // 64 * 64 and text == solo
    assert _reused(eng, PROMPT, None) == (0, solo)  # unsalted requests share their own chain
    assert _reused(eng, PROMPT, None)[0] > 0


def test_each_request_is_told_the_experts_its_own_tokens_chose(model):
    prompts = [PROMPT[:70], PROMPT[30:150], PROMPT[5:40]]
    n_new = 5
    solo_routes = []
    for p in prompts:
        routing: list = []
        model.generate(p, n_new, routing=routing)
        solo_routes.append(routing)  # [0]: the prompt's forward; [j]: decode step j
    eng = Engine(model, 400, max_batch=3)
    ids = [eng.submit(p, n_new) for p in prompts]
    checked = 0
    while not eng.idle():
        rep = eng.step()
        per = {w.request: w for w in rep.work}
        union = [set() for _ in rep.experts]
        for i, rid in enumerate(ids):
            mine = rep.experts_of(rid)
            if rid not in per:
                assert mine == ()
                continue
            for layer, experts in enumerate(mine):
                union[layer] |= set(experts)
            w = per[rid]
            if w.kind == "decode":  # its token at position w.start: solo decode step j
                j = w.start - len(prompts[i]) + 1
                want = [tuple(sorted(set(r.ids[0].tolist()))) for r in solo_routes[i][j]]
                assert list(mine) == want, (rid, w.start)
                checked += 1
        assert union == [set(e) for e in rep.experts]
    assert checked >= 3 * (n_new - 2)
