"""Human-friendly numbers for the storage dashboard.

Sizes use binary prefixes (1 KiB = 1024 bytes) because that is what the
underlying volumes report; durations use the largest two units that fit.
"""

BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
DURATION_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))


def format_bytes(n):
    """``n`` bytes as a short string such as '512 B', '1.5 KiB' or '3.2 GiB'."""
    if n < 0:
        return "-" + format_bytes(-n)
    if n < 1024:
        return f"{int(n)} B"
    value = float(n)
    for unit in BYTE_UNITS[1:]:
        value /= 1024
        if value < 1024 or unit == BYTE_UNITS[-1]:
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def parse_bytes(text):
    """The number of bytes in a string like '1.5 KiB', '20MiB' or '300'."""
    text = text.strip()
    for power, unit in reversed(list(enumerate(BYTE_UNITS))):
        if text.endswith(unit):
            number = text[: -len(unit)].strip()
            return int(round(float(number) * 1024**power))
    return int(text)


def format_duration(seconds):
    """'2 h 5 min', '45 s', '3 d 1 h': the two largest non-zero units."""
    seconds = int(round(seconds))
    if seconds <= 0:
        return "0 s"
    parts = []
    for name, size in DURATION_UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {name}")
        if len(parts) == 2:
            break
    return " ".join(parts)


def format_percent(part, whole, digits=0):
    if whole == 0:
        return "n/a"
    return f"{100 * part / whole:.{digits}f}%"


def usage_line(used, total):
    """'3.2 GiB of 10.0 GiB (32%)' for a volume."""
    return f"{format_bytes(used)} of {format_bytes(total)} ({format_percent(used, total)})"
