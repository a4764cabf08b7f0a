"""The lab's tabs: one module (or small package) per subsystem; tabs/registry.py lists them."""

import torch

# Figures run small tensors: intra-op threads cost more than they save here (a chunked-KDA bmm
# took ~15 ms with 2 threads on a loaded 2-core machine vs ~1 ms with one).
torch.set_num_threads(1)
