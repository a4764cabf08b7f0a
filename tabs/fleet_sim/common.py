"""The look of the fleet simulation figures: one colour and marker per router wherever routers
are compared (ROUTERS order), one colour per request class. The runs they draw:
core.experiments.fleet_sim."""

from __future__ import annotations

from core.fleet.routers import ROUTERS

# Warm for the cache-blind routers, blues for the ring routers, green for cache_aware.
ROUTER_COLORS = dict(zip(ROUTERS, ("#CC79A7", "#D55E00", "#0072B2", "#56B4E9", "#009E73"),
                         strict=True))
ROUTER_MARKERS = dict(zip(ROUTERS, ("o", "s", "^", "v", "D"), strict=True))
CLASS_COLORS = {"short": "#56B4E9", "long": "#0072B2"}
