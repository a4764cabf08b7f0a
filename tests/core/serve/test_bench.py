"""`python -m core.bench serve`'s speculative rows run end to end: the repeated best case and
each of the lab's prompt kinds, both decoders producing the same bytes. No timing asserts: the
benchmark's own target column judges speed."""

from __future__ import annotations

from core.bench.serve import spec_rows
from core.serve.prompts import KINDS


def test_spec_rows_cover_the_best_case_and_every_prompt_kind(capsys):
    spec_rows(repeat=1)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("spec ")]
    assert [r.split(",")[0].split()[-1] for r in rows] == ["repeated", *KINDS]
    assert all(r.endswith("same bytes: True") for r in rows)
    assert "(target >= 1.5x)" in rows[0]
