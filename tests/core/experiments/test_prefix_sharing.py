"""core.experiments.prefix_sharing against the pool itself: a hit shares latent pages in place and
copies the KDA state, and nothing the cache holds is written while the request decodes."""

from __future__ import annotations

import pytest

from core.errors import ParamError
from core.experiments.prefix_sharing import sharing
from core.model.manifest import shipped_dims


@pytest.mark.parametrize("k", [1, 3])
def test_latents_shared_state_copied_cache_untouched(k: int) -> None:
    s = sharing(k, 4)
    d = shipped_dims()
    assert s.reused_blocks > 0 and s.reused_blocks % k == 0  # a boundary on the grid
    assert s.shared_pages == s.reused_blocks * d.n_mla
    assert s.copied_pages == s.group_pages > 0
    page = s.cached_bytes // (s.shared_pages + s.group_pages)
    assert s.cached_changed == 0 < s.in_place_changed <= s.group_pages * page
    assert s.step_changed > 0.9  # a recurrent state: (almost) every value moves each token


@pytest.mark.parametrize("n_new", [0, 2, 129, 3.5, "8"])
def test_bad_n_new_names_the_parameter(n_new: object) -> None:
    with pytest.raises(ParamError, match="n_new"):
        sharing(1, n_new)  # type: ignore[arg-type]
