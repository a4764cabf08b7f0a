"""The shipped model has learned the corpus: held-out bits per byte clearly below the bigram
baseline (recorded in eval.json and recomputed here on a slice), and the curve was recorded."""

from __future__ import annotations

import json

from core.model.corpus import DOMAINS, bigram_bpb, build_corpus, unigram_bpb
from core.model.evaluate import model_bpb
from core.model.weights import ASSET_DIR

MARGIN = 0.5  # bits per byte below the bigram baseline, at least


def test_eval_json_beats_bigram() -> None:
    """eval.json: model < bigram - 0.5 < unigram, and the baselines match a recomputation."""
    ev = json.loads((ASSET_DIR / "eval.json").read_text())
    assert ev["model_bpb"] < ev["bigram_bpb"] - MARGIN < ev["unigram_bpb"]
    c = build_corpus()
    assert abs(ev["bigram_bpb"] - bigram_bpb(c.train, c.heldout)) < 1e-3
    assert abs(ev["unigram_bpb"] - unigram_bpb(c.train, c.heldout)) < 1e-3


def test_recomputed_bpb_on_slice(shipped) -> None:
    """16 held-out windows: the model's bpb is still clearly below the bigram baseline."""
    c = build_corpus()
    bpb = model_bpb(shipped, c.heldout, max_windows=16)
    assert bpb < bigram_bpb(c.train, c.heldout) - MARGIN


def test_curve_recorded() -> None:
    """curve.json holds a falling training curve with held-out points."""
    pts = json.loads((ASSET_DIR / "curve.json").read_text())["points"]
    held = [p["heldout_bpb"] for p in pts if "heldout_bpb" in p]
    assert len(pts) >= 10 and len(held) >= 3 and held[-1] < held[0] - 2


def test_corpus_deterministic_and_multidomain() -> None:
    """Same seed, same bytes; every domain in train and held-out; a few MB at most."""
    a, b = build_corpus(), build_corpus()
    assert a.train.tobytes() == b.train.tobytes()
    assert set(a.train_domains.tolist()) == set(a.heldout_domains.tolist()) == set(
        range(len(DOMAINS)))
    assert len(a.train) + len(a.heldout) < 4_000_000
