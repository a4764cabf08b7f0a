"""The lab's tabs: one module (or small package) per subsystem; tabs/registry.py lists them."""
