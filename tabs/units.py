"""Byte units the figures print (binary: 1 KiB = 1,024 B)."""

KIB, MIB, GIB = 1024, 1024**2, 1024**3
