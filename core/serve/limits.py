"""The serving engine's limits, torch-free: tab controls are declared with them before the
engine (and torch) loads.

  KDA_CHUNK          tokens per KDA chunk: checkpoints are captured at chunk boundaries, so pages
                     and prefill chunks are multiples of it
  MAX_PROMPT         bytes of one request's prompt (Engine)
  MAX_NEW            bytes one request may generate (Engine)
  MAX_DRAFT          gamma: drafts per verify pass (Engine, ServeSession)
  MAX_PROMPT_BYTES   bytes of a ServeSession's prompt (the Serve tab's text box)
  MAX_SESSION_NEW    bytes a ServeSession's request may generate
  default_slots(d)   a session's (and a class room's) expert cache: a quarter of the model's
                     experts, so the cache misses as a served model's does
"""

KDA_CHUNK = 64
MAX_PROMPT = 1 << 20
MAX_NEW = 1 << 16
MAX_DRAFT = 8
MAX_PROMPT_BYTES = 512
MAX_SESSION_NEW = 256


def default_slots(dims: object) -> int:
    """Expert cache slots of a ServeSession and of the class room by default: a quarter of the
    model's layer x expert pairs (dims: anything with n_layers and n_experts)."""
    return dims.n_layers * dims.n_experts // 4  # type: ignore[attr-defined]
