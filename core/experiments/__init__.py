"""The experiments the tabs run on the engine's mechanisms: pure functions of a tab's controls,
cached (single-flight: flight.py), with no gradio or matplotlib. tabs/ draws what they return.

  flight.py   SingleFlight and @single_flight: a bounded LRU cache in which one computation
              serves every concurrent caller of a key
"""
