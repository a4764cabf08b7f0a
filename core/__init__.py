"""Serving Lab engine: torch / numpy / safetensors only (never gradio or matplotlib)."""
