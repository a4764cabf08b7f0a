"""What the experiments run on and how far, torch-free: the tabs declare their controls with
these before torch loads, and the experiment modules read them from here (one home each).

Prefix cache (prefix.py, prefix_spacing.py)
  DOCUMENT   536 bytes of code: 8 full blocks of 64 bytes and 24 bytes of a ninth
  CACHED     DOCUMENT and a first question: what every preset's cache has served
  REQUEST    DOCUMENT and another question: the hit, fallback and partial presets' request
  OTHER      SQL that shares nothing with CACHED: the miss preset's request
  PRESETS    hit, miss, fallback, partial; request_of(preset) is its request
  SHARED     tokens REQUEST shares with CACHED
  SPACINGS   checkpoint spacings k (a KDA checkpoint group every k blocks)
  MAX_LOOKUP_STEPS   steps of any preset's two-stage lookup: at most one per block walked
             (stage 1) plus one per boundary checked on the way back (stage 2), a block being
             at least one KDA chunk of byte tokens
Page pool (paging.py)
  MAX_TOKENS sequence lengths 1..MAX_TOKENS; POOL_PAGES, the one pool every figure uses
Engine (engine.py)
  N_NEW      bytes each speculative request generates; GAMMAS, the draft lengths swept
Overview (overview.py)
  MAX_CLUSTERS   the most clusters its fleet ring routes over
"""

from __future__ import annotations

from core.serve.limits import KDA_CHUNK, MAX_DRAFT

DOCUMENT = (
    b"import json\n\n\n"
    b"def load_config(path):\n"
    b"    \"\"\"Read a JSON config file and fill in the defaults.\"\"\"\n"
    b"    with open(path) as f:\n"
    b"        config = json.load(f)\n"
    b"    config.setdefault(\"workers\", 4)\n"
    b"    config.setdefault(\"timeout\", 30)\n"
    b"    return config\n\n\n"
    b"def start(config):\n"
    b"    pool = []\n"
    b"    for i in range(config[\"workers\"]):\n"
    b"        pool.append(spawn(i, timeout=config[\"timeout\"]))\n"
    b"    return pool\n\n\n"
    b"def stop(pool):\n"
    b"    for worker in pool:\n"
    b"        worker.join()\n"
    b"    pool.clear()\n\n\n"
    b"def spawn(i, timeout):\n"
    b"    return Worker(name=f\"worker-{i}\", timeout=timeout)\n\n\n"
    b"class Worker:\n"
    b"    def __init__(self, name, timeout):\n"
    b"        self.name = name\n"
    b"        self.timeout = timeout\n"
)[:536]
CACHED = DOCUMENT + (
    b"\n# Question: what does load_config return when the file has no workers key?\n"
    b"# Answer: a dict whose workers entry is 4, the default set by setdefault, and whose\n"
    b"# timeout entry is 30 unless the file sets it.\n"
)
REQUEST = DOCUMENT + (
    b"\n# Question: how many workers does start spawn by default?\n"
    b"# Answer: four, one per"
)
OTHER = (
    b"SELECT name, count(*) AS n\nFROM orders\nJOIN users ON users.id = orders.user_id\n"
    b"WHERE orders.created_at > '2024-01-01'\nGROUP BY name\nORDER BY n DESC\nLIMIT 10;\n"
) * 4
PRESETS = ("hit", "miss", "fallback", "partial")
SHARED = len(DOCUMENT)
SPACINGS = tuple(range(1, 9))


def request_of(preset: str) -> bytes:
    """The prompt a preset serves after CACHED."""
    return OTHER if preset == "miss" else REQUEST


MAX_LOOKUP_STEPS = 2 * (max(len(request_of(p)) for p in PRESETS) // KDA_CHUNK) + 1

MAX_TOKENS = 1024
POOL_PAGES = 128  # holds MAX_TOKENS at the smallest page size

N_NEW = 32  # the sweep of every (kind, gamma) stays a few seconds
GAMMAS = tuple(range(1, MAX_DRAFT + 1))

MAX_CLUSTERS = 64
