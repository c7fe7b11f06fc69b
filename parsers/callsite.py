"""The call site a raw log line names: its ``pos``, level and message, read without a full parse.

Reading which release wrote a log needs only these three fields, from many lines, fast: a
KubeVirt JSON line carries them as ``"pos"``, ``"level"`` and ``"msg"`` (anywhere in the line,
behind any prefix); a klog line as its header's ``file:line]`` and severity letter; a 2018-era
logfmt line as ``level=`` and ``pos=`` (its text is not read: no release of that era is
catalogued). Lines of none of these shapes give None.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

_POS = re.compile(r'"pos":"([^"\\]+)"')
_LEVEL = re.compile(r'"level":"([a-z]+)"')
_MSG = re.compile(r'"msg":"((?:[^"\\]|\\.)*)"')
_KLOG = re.compile(r"(?:^|\s)([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ ([\w.-]+\.go:\d+)\] (.*)$")
_SEVERITY = {"I": "info", "W": "warning", "E": "error", "F": "fatal"}
# KubeVirt's 2018-era logfmt (before v0.6): ``level=… timestamp=… pos=file:line …``
_LOGFMT = re.compile(r"(?:^|\s)level=([a-z]+) timestamp=\S+ pos=([\w.-]+\.go):(\d+)\b")


@dataclass(frozen=True)
class CallSiteLine:
    file: str  # basename, e.g. ``vm.go``
    line: int
    level: str
    msg: str
    shape: str  # "json" | "klog" | "logfmt" (2018, before v0.6: no release catalogued)


def call_site(raw: str) -> CallSiteLine | None:
    pos = _POS.search(raw)
    if pos is not None:
        return _json_site(raw, pos.group(1))
    old = _LOGFMT.search(raw)
    if old is not None:
        return CallSiteLine(old.group(2), int(old.group(3)), old.group(1), "", "logfmt")
    klog = _KLOG.search(raw.rstrip("\r\n"))
    if klog is None:
        return None
    file, _, line = klog.group(2).rpartition(":")
    return CallSiteLine(file, int(line), _SEVERITY[klog.group(1)], klog.group(3), "klog")


def _json_site(raw: str, pos: str) -> CallSiteLine | None:
    level, msg = _LEVEL.search(raw), _MSG.search(raw)
    if level is None or msg is None:
        return None
    return _json_site_of(pos, level.group(1), msg.group(1))


@lru_cache(maxsize=4096)
def _json_site_of(pos: str, level: str, escaped: str) -> CallSiteLine | None:
    """The call site of a JSON line's fields (a log repeats a few hundred of them)."""
    file, _, line = pos.rpartition(":")
    if not file or not line.isdigit():
        return None
    try:
        text = json.loads(f'"{escaped}"')
    except ValueError:
        return None
    return CallSiteLine(file, int(line), level, str(text), "json")
