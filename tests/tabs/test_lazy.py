"""Lazy names (tabs/lazy.py): a "module:attribute" resolved on its first call and kept, equal
and hashed by its name (the render cache keys on FigureSpecs), a bad name refused at once and
a missing attribute named; torch's thread count is set before the first resolution imports
anything (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tabs.lazy import Lazy, lazy
from tabs.spec import FigureSpec
from tests.conftest import REPO


def test_resolves_on_first_call_and_keeps_it():
    f = Lazy("math:sqrt")
    assert f.module == "math" and f(9.0) == 3.0
    import math

    assert f.resolve() is math.sqrt


def test_equal_and_hashed_by_name():
    a, b = Lazy("math:sqrt"), Lazy("math:sqrt")
    a(4.0)  # resolved or not, the same name is the same function
    assert a == b and hash(a) == hash(b) and a != Lazy("math:floor")
    spec, again = FigureSpec("x", "X", "math:sqrt", ()), FigureSpec("x", "X", "math:sqrt", ())
    assert spec == again and hash(spec) == hash(again) and spec.fn == a


@pytest.mark.parametrize("name", ["math", "math:", ":sqrt", "math:sqrt:x"])
def test_a_malformed_name_is_refused_at_declaration(name):
    with pytest.raises(ValueError, match="module:attribute"):
        FigureSpec("x", "X", name, ())


def test_a_missing_attribute_is_named():
    with pytest.raises(AttributeError, match="math:no_such"):
        Lazy("math:no_such")()


def test_callables_pass_through():
    assert lazy(len) is len
    with pytest.raises(TypeError):
        lazy(3)


@pytest.mark.parametrize(("before", "threads"), [("", 1), ("set_torch_threads(2)", 2)])
def test_torch_threads_are_set_before_the_first_resolution(before, threads):
    script = ("import sys\nfrom tabs.lazy import Lazy, set_torch_threads\n"
              f"{before}\nassert 'torch' not in sys.modules\nLazy('math:sqrt')(4.0)\n"
              "import torch\nprint(torch.get_num_threads())")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) == threads
