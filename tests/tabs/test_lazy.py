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


def test_two_threads_resolving_into_one_cyclic_package_both_succeed(tmp_path, monkeypatch):
    """A package whose modules import each other (as core.paging's do) imported from two threads
    at once: without one import at a time, the second thread sees a partially initialised
    module ("cannot import name ...") every time with these sleeps (checked with the lock
    removed)."""
    import threading
    import time

    pkg = tmp_path / "lazy_cycle_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from lazy_cycle_pkg.ledger import G\n")
    (pkg / "ledger.py").write_text("import time\ntime.sleep(0.1)\n"
                                   "from lazy_cycle_pkg.pack import H\nG = 1\n")
    (pkg / "pack.py").write_text("import time\ntime.sleep(0.1)\n"
                                 "from lazy_cycle_pkg.pool import P\nH = 2\n")
    (pkg / "pool.py").write_text("from lazy_cycle_pkg import ledger\nP = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    got, errors = {}, []

    def resolve(name: str) -> None:
        try:
            got[name] = Lazy(name).resolve()
        except Exception as e:  # what the race raises: the test's failure message
            errors.append(repr(e))

    names = ("lazy_cycle_pkg.ledger:G", "lazy_cycle_pkg.pool:P")
    threads = [threading.Thread(target=lambda n=n: resolve(n)) for n in names]
    try:
        threads[0].start()
        time.sleep(0.05)  # the first is inside the package's imports
        threads[1].start()
        for t in threads:
            t.join(timeout=30)
    finally:
        for m in [m for m in sys.modules if m.startswith("lazy_cycle_pkg")]:
            del sys.modules[m]
    assert not errors and got == {names[0]: 1, names[1]: 3}
