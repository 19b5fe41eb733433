"""Channel definitions for the sensor logger.

A channel maps one analogue input of the acquisition board to a physical quantity:
the raw ADC count becomes a value with ``value = raw * scale + offset``. The channel
list lives in ``channels.json`` next to the log files and is edited from the logger's
settings page, which loads and saves it through this module.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

ADC_MAX = 4095  # 12-bit converter
INPUTS = range(8)
FORMAT_VERSION = 2


class ChannelError(ValueError):
    pass


@dataclass
class Channel:
    name: str
    input: int
    unit: str = ""
    scale: float = 1.0
    offset: float = 0.0
    low_alarm: float | None = None
    high_alarm: float | None = None
    enabled: bool = True

    def convert(self, raw: int) -> float:
        if not 0 <= raw <= ADC_MAX:
            raise ChannelError(f"{self.name}: raw reading {raw} out of range")
        return raw * self.scale + self.offset

    def alarm(self, value: float) -> str | None:
        """``"low"`` or ``"high"`` when ``value`` is past an alarm limit, else None."""
        if self.low_alarm is not None and value < self.low_alarm:
            return "low"
        if self.high_alarm is not None and value > self.high_alarm:
            return "high"
        return None

    def to_dict(self) -> dict:
        d = {
            "name": self.name,
            "input": self.input,
            "unit": self.unit,
            "scale": self.scale,
            "offset": self.offset,
        }
        if self.low_alarm is not None:
            d["low_alarm"] = self.low_alarm
        if self.high_alarm is not None:
            d["high_alarm"] = self.high_alarm
        d["enabled"] = self.enabled
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Channel:
        try:
            ch = cls(
                name=str(d["name"]),
                input=int(d["input"]),
                unit=str(d.get("unit", "")),
                scale=float(d.get("scale", 1.0)),
                offset=float(d.get("offset", 0.0)),
                low_alarm=_opt_float(d.get("low_alarm")),
                high_alarm=_opt_float(d.get("high_alarm")),
                enabled=bool(d.get("enabled", True)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ChannelError(f"bad channel entry {d!r}: {e}") from None
        if not math.isfinite(ch.scale) or ch.scale == 0:
            raise ChannelError(f"{ch.name}: scale must be a non-zero number")
        return ch


def _opt_float(v: object) -> float | None:
    return None if v is None else float(v)


def validate(channels: list[Channel]) -> None:
    """Names are unique; two enabled channels never read the same input."""
    names: set[str] = set()
    used: dict[int, str] = {}
    for ch in channels:
        if ch.name in names:
            raise ChannelError(f"duplicate channel name {ch.name!r}")
        names.add(ch.name)
        if ch.input not in INPUTS:
            raise ChannelError(f"{ch.name}: no input {ch.input} on this board")
        if ch.enabled:
            if ch.input in used:
                raise ChannelError(f"{ch.name} and {used[ch.input]} both read input {ch.input}")
            used[ch.input] = ch.name


def load_channels(path: str | Path) -> list[Channel]:
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("version") not in (1, FORMAT_VERSION):
        raise ChannelError(f"{path}: unsupported format version {doc.get('version')!r}")
    channels = [Channel.from_dict(d) for d in doc.get("channels", [])]
    validate(channels)
    return channels


def save_channels(path: str | Path, channels: list[Channel]) -> None:
    validate(channels)
    doc = {"version": FORMAT_VERSION, "channels": [ch.to_dict() for ch in channels]}
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def active(channels: list[Channel]) -> list[Channel]:
    return [ch for ch in channels if ch.enabled]


def read_sample(channels: list[Channel], raw_by_input: dict[int, int]) -> dict[str, float]:
    """Convert one sample of the board (raw counts by input) for the enabled channels."""
    return {ch.name: ch.convert(raw_by_input[ch.input]) for ch in active(channels)}
