"""Training is reproducible and reports every baseline side by side.

Pinned: a short run of the tiny model, twice, writes byte-identical files (weights, manifest,
curve, eval: sha256 equal, so no wall-clock time may be written); eval.json has per-domain
model, unigram, bigram and zlib bits per byte over the same held-out text; the curve has
held-out points; bad configs name the parameter; the global torch settings come back.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

from core.errors import ParamError
from core.model.corpus import DOMAINS
from core.model.train import TrainConfig, train
from tests.core.model.conftest import TINY

SHORT = TrainConfig(steps=3, batch=2, seq=32, log_every=1, eval_every=2, eval_windows=2,
                    final_windows=8)


def _digests(d: Path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(d.iterdir())}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    threads = torch.get_num_threads()
    a, b = tmp_path_factory.mktemp("run_a"), tmp_path_factory.mktemp("run_b")
    for d in (a, b):
        train(SHORT, TINY, d)
    assert torch.get_num_threads() == threads
    return a, b


def test_identical_sha256(runs) -> None:
    """Every output file of the two runs has the same sha256."""
    a, b = runs
    da, db = _digests(a), _digests(b)
    assert set(da) == {"curve.json", "eval.json", "manifest.json", "trunk.safetensors",
                       "experts-00001-of-00002.safetensors", "experts-00002-of-00002.safetensors"}
    assert da == db


def test_eval_side_by_side(runs) -> None:
    """Per domain and overall: positions, bytes and the four bits-per-byte figures."""
    ev = json.loads((runs[0] / "eval.json").read_text())
    assert ev["corpus"] == "stdlib" and ev["domains"] == list(DOMAINS)
    rows = ev["per_domain"]
    assert "all" in rows and set(rows) <= {*DOMAINS, "all"}
    for row in rows.values():
        assert row["positions"] > 0 and row["bytes"] > 0
        for k in ("model_bpb", "unigram_bpb", "bigram_bpb", "zlib_bpb"):
            assert 0 < row[k] < 12, (k, row)
    assert rows["all"]["positions"] == sum(r["positions"] for n, r in rows.items() if n != "all")
    assert ev["zlib_bpb"] < ev["bigram_bpb"] < ev["unigram_bpb"]
    pts = json.loads((runs[0] / "curve.json").read_text())["points"]
    assert [p["step"] for p in pts] == [0, 1, 2] and "heldout_bpb" in pts[0]
    assert not any("seconds" in p for p in pts)


def test_bad_config() -> None:
    """Bad values name their parameter."""
    for kw, name in (({"steps": 0}, "steps"), ({"corpus": "web"}, "corpus"),
                     ({"final_windows": 0}, "final_windows"), ({"lr": 2.0}, "lr")):
        with pytest.raises(ParamError, match=name):
            TrainConfig(**kw)
