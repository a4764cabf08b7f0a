"""The role palette (tabs/palette.py) under the common colour-vision deficiencies.

Each contrasted pair of role colours is simulated for protanopia, deuteranopia and tritanopia
with the matrices of Machado, Oliveira and Fernandes, "A Physiologically-based Model for
Simulation of Color Vision Deficiency", IEEE TVCG 15(6), 2009 (severity 1.0, applied to linear
sRGB), and compared by CIEDE2000 in CIELAB (D65). colour-science supplies the matrices and the
colour difference; the test pins one matrix to the paper's table so a library change shows.
For tritanopia the paper's matrices are an approximation (its shift paradigm); colour warns so.
"""

from __future__ import annotations

import itertools

import colour
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from tabs.palette import CONTRASTED, ROLE

MIN_DELTA_E = 10.0  # CIEDE2000; about 2.3 is a just-noticeable difference, 10 reads at a glance
DEFICIENCIES = {"protanopia": "Protanomaly", "deuteranopia": "Deuteranomaly",
                "tritanopia": "Tritanomaly"}
# Machado et al. 2009, Table 1, protanomaly at severity 1.0
PROTANOPIA = [[0.152286, 1.052583, -0.204868],
              [0.114503, 0.786281, 0.099216],
              [-0.003882, -0.048116, 1.051998]]

pytestmark = pytest.mark.filterwarnings("ignore::colour.utilities.ColourUsageWarning")


def simulated_lab(hexes: list[str], deficiency: str | None) -> np.ndarray:
    """CIELAB (D65) of sRGB colours as seen with the deficiency (None: normal vision). [(n, 3)]"""
    linear = colour.cctf_decoding(np.array([to_rgb(h) for h in hexes]), function="sRGB")
    if deficiency is not None:
        m = colour.blindness.matrix_cvd_Machado2009(DEFICIENCIES[deficiency], 1.0)
        linear = np.clip(linear @ m.T, 0.0, 1.0)  # (n, 3)
    return colour.XYZ_to_Lab(colour.RGB_to_XYZ(linear, "sRGB"))


def pair_differences(deficiency: str | None) -> list[tuple[float, str, str]]:
    """(CIEDE2000, role, role) for every contrasted pair, smallest first."""
    out = []
    for group in CONTRASTED:
        lab = simulated_lab([ROLE[r] for r in group], deficiency)
        for i, j in itertools.combinations(range(len(group)), 2):
            d = float(colour.delta_E(lab[i], lab[j], method="CIE 2000"))
            out.append((d, group[i], group[j]))
    return sorted(out)


def test_machado_matrix_is_the_papers():
    m = colour.blindness.matrix_cvd_Machado2009("Protanomaly", 1.0)
    np.testing.assert_allclose(m, PROTANOPIA, atol=1e-6)


def test_simulation_separates_red_from_green_only_for_normal_vision():
    """The simulation does something: pure red and green collapse for a deuteranope."""
    normal = simulated_lab(["#FF0000", "#00FF00"], None)
    deutan = simulated_lab(["#FF0000", "#00FF00"], "deuteranopia")
    assert colour.delta_E(*normal, method="CIE 2000") > 60
    assert colour.delta_E(*deutan, method="CIE 2000") < 25


def test_contrasted_roles_name_real_roles_and_differ():
    for group in CONTRASTED:
        assert set(group) <= set(ROLE), set(group) - set(ROLE)
        assert len({ROLE[r].upper() for r in group}) == len(group), group


@pytest.mark.parametrize("deficiency", [None, *DEFICIENCIES])
def test_contrasted_roles_stay_distinguishable(deficiency):
    """Every contrasted pair keeps a CIEDE2000 of at least MIN_DELTA_E."""
    close = [p for p in pair_differences(deficiency) if p[0] < MIN_DELTA_E]
    assert not close, f"{deficiency}: {close}"
