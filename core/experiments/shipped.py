"""The shipped model and what was recorded of it, each loaded once per process (single-flight:
two tabs asking at the same moment share one load). Its dimensions come from its manifest,
without torch: core.model.manifest.shipped_dims.

  model()    the HybridLM of assets/model/, every expert resident (load_model checks each
             shard's sha256 first)
  trace()    its routing trace over held-out text (assets/model/, core.model.trace)
  record()   its training record: (curve points, eval summary)
"""

from __future__ import annotations

from core.experiments.flight import single_flight
from core.model.manifest import ASSET_DIR
from core.model.model import HybridLM
from core.model.trace import TRACE_FILE, RoutingTrace, load
from core.model.usage import training_record
from core.model.weights import load_model


@single_flight(1)
def model() -> HybridLM:
    return load_model()


@single_flight(1)
def trace() -> RoutingTrace:
    return load(ASSET_DIR / TRACE_FILE)


@single_flight(1)
def record() -> tuple[list[dict], dict]:
    return training_record()
