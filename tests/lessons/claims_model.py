"""Claims of assets/lessons/model.md, computed from the shipped model, its corpus and its trace.

Shape claims come from the loaded model (ModelDims and a parameter count of the live module);
baseline numbers are recomputed from the shipped corpus and checked against eval.json (the
model's own bits per byte is the one number read from eval.json: scoring 190 KB of held-out
text is minutes of CPU); samples are generated greedily by the tab's own cached function;
routing information comes from core.model.usage on the shipped trace and is re-derived by hand
where the definition is short; K3 bytes are re-derived from the dimensions.
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np

from core.dims import K3
from core.experiments.model import PROMPTS, greedy_sample
from core.experiments.shipped import model, record, trace
from core.experts.layout import MXFP4_BLOCK
from core.model.corpus import DOMAINS, bigram_bpb, build_corpus, unigram_bpb, zlib_bpb
from core.model.info import K3_EXPERT_MXFP4_BYTES, serving_bytes
from core.model.manifest import shipped_dims as dims
from core.model.trace import RECORD_TOKENS, RECORD_WINDOW
from core.model.usage import domain_runs, entropy, specialisation
from tabs.model import TAB
from tests.core.model.test_trace_decode import CASES, TIE
from tests.lessons.registry import Reason, Within, claim, reason

LESSON = "model"


@functools.cache
def summary() -> dict:
    return record()[1]


@functools.cache
def corpus():
    return build_corpus()


@functools.cache
def info():
    return specialisation(trace(), len(DOMAINS))


def sample(domain: str) -> str:
    """The tab's greedy sample at the tab's default length, as text."""
    out, _ = greedy_sample(domain, TAB.defaults()["sample_len"])
    return out.decode("utf-8", errors="replace")


def half_up(x: float) -> int:
    return math.floor(x + 0.5)


def serving(name: str):
    return next(s for s in serving_bytes(dims()) if s.name == name)


@claim(LESSON, "through {L} layers in the Kimi Linear pattern: {kda} [[KDA]] layers, then {mla} "
               "[[MLA]] layer, repeated")
def layer_pattern() -> dict[str, object]:
    d = dims()
    kinds = [b.kind for b in model().blocks]
    period = ["kda"] * (d.mla_every - 1) + ["mla"]
    assert kinds == period * (d.n_layers // d.mla_every) == list(d.layer_kinds)
    return {"L": len(kinds), "kda": period.count("kda"), "mla": period.count("mla")}


@claim(LESSON, "a [[MoE]] of {E} routed experts, of which a [[top-k]] router picks {k}, plus "
               "{shared} shared expert")
def moe_shape() -> dict[str, object]:
    moe = model().blocks[0].moe
    E = moe.w1.shape[0]
    assert moe.router.out_features == E == dims().n_experts
    shared = {n.rsplit("_", 1)[0] for n, _ in moe.named_children() if n.startswith("shared")}
    assert shared == {"shared"}  # one triple shared_w1, shared_w2, shared_w3
    return {"E": E, "k": dims().top_k, "shared": len(shared)}


@claim(LESSON, "only {active:.2f} M of its {total:.2f} M parameters work on any one byte")
def active_params() -> dict[str, object]:
    d, m = dims(), model()
    counted = sum(p.numel() for p in m.parameters())
    assert counted == d.total_params == summary()["params"]
    routed_unused = d.n_layers * (d.n_experts - d.top_k) * d.expert_params
    assert d.active_params == counted - routed_unused
    return {"active": d.active_params / 1e6, "total": counted / 1e6}


@functools.cache
def baselines() -> dict[str, float]:
    """zlib, bigram, unigram bits per byte recomputed from the shipped corpus (= eval.json)."""
    c = corpus()
    got = {"zlib_bpb": zlib_bpb(c.heldout), "bigram_bpb": bigram_bpb(c.train, c.heldout),
           "unigram_bpb": unigram_bpb(c.train, c.heldout)}
    for k, v in got.items():
        assert abs(v - summary()[k]) < 1e-3, (k, v, summary()[k])
    assert summary()["heldout_bytes"] == len(c.heldout)
    return got


@claim(LESSON, "it needs {model:.2f} [[bits per byte]], against {zlib:.2f} for zlib, {bigram:.2f} "
               "for a bigram model and {unigram:.2f} for byte frequencies")
def overall_bpb() -> dict[str, object]:
    b, m = baselines(), summary()["model_bpb"]
    assert m < b["zlib_bpb"] < b["bigram_bpb"] < b["unigram_bpb"]
    return {"model": m, "zlib": b["zlib_bpb"], "bigram": b["bigram_bpb"],
            "unigram": b["unigram_bpb"]}


def domain_zlib(name: str) -> float:
    c = corpus()
    z = zlib_bpb(c.heldout[c.heldout_domains == DOMAINS.index(name)])
    assert abs(z - summary()["per_domain"][name]["zlib_bpb"]) < 1e-3
    return z


@claim(LESSON, "beats zlib in every domain (code {cm:.2f} vs {cz:.2f}, prose {pm:.2f} vs {pz:.2f})")
def per_domain_vs_zlib() -> dict[str, object]:
    per = summary()["per_domain"]
    for name in DOMAINS:
        assert per[name]["model_bpb"] < domain_zlib(name), name
    return {"cm": per["code"]["model_bpb"], "cz": domain_zlib("code"),
            "pm": per["prose"]["model_bpb"], "pz": domain_zlib("prose")}


@claim(LESSON, 'After `{code_prompt}` it writes `{code_line}` (a duplicate argument); after '
               '"{prose_prompt}" it writes "{prose}"')
def samples() -> dict[str, object]:
    code = sample("code")
    line = next(x.strip() for x in code.splitlines() if x.strip())
    try:
        compile(line + "\n    pass\n", "<sample>", "exec")
        raise AssertionError(f"{line!r} compiles")
    except SyntaxError as e:
        assert "duplicate argument" in str(e), e
    assert line.startswith("def ") and line.endswith(":")  # locally plausible Python
    prose = sample("prose").strip()
    words = prose.split()
    loops = any(words[i : i + 2] == words[i + 2 : i + 4] for i in range(len(words) - 3))
    assert loops, f"no repeated word pair in {prose!r}"
    return {"code_prompt": PROMPTS["code"].decode().strip(), "code_line": line,
            "prose_prompt": PROMPTS["prose"].decode(), "prose": prose}


@claim(LESSON, "A byte's top-{k} set carries {lo:.2f} to {hi:.2f} bits about its domain, of at "
               "most {H:.2f} (the entropy of this domain mix); shuffled domains score {slo:.2f} "
               "to {shi:.2f} by chance. The trace holds only {runs} domain runs")
def routing_information() -> dict[str, object]:
    s, t = info(), trace()
    p = np.bincount(t.domains, minlength=len(DOMAINS)) / len(t.domains)
    H = float(-(p[p > 0] * np.log2(p[p > 0])).sum())
    assert abs(H - s.entropy) < 1e-12 and H < math.log2(len(DOMAINS))
    assert (s.top_set <= H + 1e-9).all() and (s.top_set > s.top_set_shuffled).all()
    assert s.runs == 1 + int(np.count_nonzero(np.diff(t.domains.astype(int))))
    return {"k": t.shape[2], "lo": s.top_set.min(), "hi": s.top_set.max(), "H": H,
            "slo": s.top_set_shuffled.min(), "shi": s.top_set_shuffled.max(), "runs": s.runs}


@claim(LESSON, "one expert is {e}× larger, a KDA state {s:.0f}×, an MLA latent per byte only "
               "{m:.0f}×")
def k3_ratios() -> dict[str, object]:
    e = serving("one routed expert")
    state = serving("KDA state S, 1 layer")
    mla = serving("MLA latent, 1 token, 1 layer")
    assert e.k3 == 4_284 * 4_096 == 17_547_264  # reference §2: the real checkpoint's expert
    assert state.k3 == K3.kda_heads * K3.kda_head_dim**2 * 4
    assert mla.k3 == (K3.kv_latent + K3.qk_rope) * 2
    return {"e": f"{e.ratio:.1f}", "s": state.ratio, "m": mla.ratio}


# ---- instructor notes ------------------------------------------------------------------------

@claim(LESSON, "MXFP4 ({bits}-bit values plus one scale byte per {block}): {k3:,} B against the "
               "toy's {toy:,} B of float32. Counted in bf16 they would look {bf16:.0f}× larger")
def expert_bytes() -> dict[str, object]:
    d = dims()
    assert K3_EXPERT_MXFP4_BYTES == K3.expert_params * 17 // 32  # 0.53125 B per parameter
    assert d.expert_bytes == 3 * d.d_model * d.expert_inner * 4
    return {"bits": 8 // 2, "block": MXFP4_BLOCK, "k3": K3_EXPERT_MXFP4_BYTES,
            "toy": d.expert_bytes, "bf16": K3.expert_bytes / d.expert_bytes}


@claim(LESSON, "The KDA state S alone is {s:.0f}× larger ({toy:,} vs {k3:,} B), {c:.1f}× with each "
               "side's conv tail; the toy's S plus conv tail against K3's S alone would say "
               "{mixed:.0f}×")
def state_bytes() -> dict[str, object]:
    d = dims()
    s, c = serving("KDA state S, 1 layer"), serving("KDA state S + conv tail, 1 layer")
    assert c.toy == s.toy + (d.conv_size - 1) * 3 * d.kda_inner * 4
    assert c.k3 == s.k3 + (K3.conv_size - 1) * 3 * K3.kda_heads * K3.kda_head_dim * 2
    return {"s": s.ratio, "toy": s.toy, "k3": s.k3, "c": c.ratio, "mixed": s.k3 / c.toy}


@claim(LESSON, "{steps} steps of {batch} × {seq} bytes. The dots are held-out samples of {w} "
               "windows; the title and the bars use all {held:,} held-out bytes")
def training_run() -> dict[str, object]:
    cfg, points = summary()["config"], record()[0]
    assert points[-1]["step"] == cfg["steps"] - 1
    assert cfg["seq"] == dims().context
    return {"steps": cfg["steps"], "batch": cfg["batch"], "seq": cfg["seq"],
            "w": cfg["eval_windows"], "held": len(corpus().heldout)}


@claim(LESSON, "Records are the easiest domain ({rm:.2f} vs zlib's {rz:.2f}), arithmetic the one "
               "where zlib does worst ({az:.2f}, the model {am:.2f})")
def easiest_hardest() -> dict[str, object]:
    per = summary()["per_domain"]
    z = {n: domain_zlib(n) for n in DOMAINS}
    assert min(DOMAINS, key=lambda n: per[n]["model_bpb"]) == "records"
    assert max(DOMAINS, key=z.__getitem__) == "arithmetic"
    return {"rm": per["records"]["model_bpb"], "rz": z["records"],
            "am": per["arithmetic"]["model_bpb"], "az": z["arithmetic"]}


@claim(LESSON, 'The model has not learned to add: "{prompt}" continues with "{answer}"')
def arithmetic_sample() -> dict[str, object]:
    prompt = PROMPTS["arithmetic"].decode()
    a, op, b = re.match(r"(\d+) ([+-]) (\d+) = ", prompt).groups()
    answer = sample("arithmetic").split()[0]
    assert int(answer) != (int(a) + int(b) if op == "+" else int(a) - int(b))
    return {"prompt": prompt, "answer": answer}


@claim(LESSON, "The trace is the first {n:,} held-out bytes, recorded as [[prefill]] over "
               "independent {w}-byte windows")
def trace_recording() -> dict[str, object]:
    t = trace()
    assert len(t.tokens) == RECORD_TOKENS and RECORD_TOKENS % RECORD_WINDOW == 0
    assert np.array_equal(t.tokens, corpus().heldout[:RECORD_TOKENS])
    return {"n": RECORD_TOKENS, "w": RECORD_WINDOW}


@claim(LESSON, "Decoding {n} windows' first {m} bytes one by one, every layer picks the same "
               "experts in the same order, except where two router scores lie within {tie} (a "
               "near-tie)")
def decode_test() -> dict[str, object]:
    lens = {m for _, m in CASES}
    assert len(lens) == 1 and all(w * RECORD_WINDOW < RECORD_TOKENS for w, _ in CASES)
    return {"n": len(CASES), "m": lens.pop(), "tie": f"{TIE:.4f}"}


@reason(LESSON, "The domain mix is {a:.0%} arithmetic, {r:.0%} records, {c:.0%} code and "
                "{p:.0%} prose, so H(domain) = {H:.2f} bits, not the {two:.0f} bits of {n} equal "
                "domains")
def domain_mix() -> Reason:
    """Effect: H(domain) of the trace's labels, by the engine's entropy. Cause: the unequal mix
    (the same number of labels, each domain an equal share): up to log2(n) bits. Rival: the
    order of the bytes (reversed; a random permutation), the mix held: the same bits."""
    t = trace()
    dom = np.asarray(t.domains)
    share = np.bincount(dom, minlength=len(DOMAINS)) / len(dom)
    assert DOMAINS == ("arithmetic", "records", "code", "prose")
    n = len(DOMAINS)
    base = entropy(dom)
    assert abs(base - info().entropy) < 1e-12
    equal = np.arange(len(dom)) % n  # every domain len(dom) / n bytes
    assert len(dom) % n == 0
    two = math.log2(n)
    perm = np.random.default_rng(0).permutation(len(dom))
    return Reason(fields={"a": share[0], "r": share[1], "c": share[2], "p": share[3], "H": base,
                          "two": two, "n": n},
                  effect="H(domain) (bits)", base=base,
                  cause="the unequal mix (each domain an equal share)", changed=entropy(equal),
                  expect="up", at_least=two - base - 1e-9,
                  rival="the order of the bytes (reversed, permuted)",
                  rival_effects=[entropy(dom[::-1]), entropy(dom[perm])],
                  within=Within(name="1e-9 bits", abs=1e-9))


@claim(LESSON, "One pick carries {lo:.2f} to {hi:.2f} bits and its shuffle baseline stays below "
               "{cap}; the top-{k} set, one of {pairs} possible pairs, carries {nlo:.2f} to "
               "{nhi:.2f} bits above its shuffle baseline. Layers {a} and {b} say the most. With "
               "{runs} domain runs")
def information_details() -> dict[str, object]:
    s, d = info(), dims()
    cap = 0.01
    assert (s.pick_shuffled < cap).all() and (s.pick <= s.top_set).all()
    net = s.top_set - s.top_set_shuffled
    a, b = np.argsort(-s.top_set)[:2]
    assert domain_runs(trace()) == s.runs
    return {"lo": s.pick.min(), "hi": s.pick.max(), "cap": cap, "k": d.top_k,
            "pairs": math.comb(d.n_experts, d.top_k), "nlo": net.min(), "nhi": net.max(),
            "a": int(a), "b": int(b), "runs": s.runs}


def _same_first(gap: int) -> float:
    """How often two bytes `gap` apart in the trace, of one domain, share their first expert
    (over every layer), counted from the recorded picks."""
    t = trace()
    top = t.chosen[..., 0]  # [N, L]
    same = top[gap:] == top[:-gap]  # [N - gap, L]
    one_domain = t.domains[gap:] == t.domains[:-gap]  # [N - gap]
    return float(same[one_domain].mean())


@claim(LESSON, "consecutive bytes share their first expert {near:.0%} of the time, bytes of one "
               "domain {gap} apart {far:.0%}")
def route_alike() -> dict[str, object]:
    near, far = _same_first(1), _same_first(RECORD_WINDOW)
    assert near > far > 1 / dims().n_experts  # both above chance; neighbours more alike
    return {"near": near, "gap": RECORD_WINDOW, "far": far}
