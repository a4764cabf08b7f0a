"""The lab's tabs: one package per tab; tabs/registry.py lists them.

A tab's package __init__ declares it (its TabSpec: controls, presets, and its figures named
lazily, tabs/lazy.py) and imports no figure module, no engine and no torch, so that building
the app stays cheap; its figure modules draw what core.experiments computes.
"""
