"""Byte units the figures print (binary: 1 KiB = 1,024 B)."""

KIB, MIB, GIB = 1024, 1024**2, 1024**3


def fmt_bytes(n: float) -> str:
    """n bytes in the largest binary unit that keeps it >= 1: '512 B', '3.2 KiB', '1.5 MiB'."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"
