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
    pos = _plain(raw, '"pos":"') or _group(_POS, raw)
    if pos is not None:
        return _json_site(raw, pos)
    old = _LOGFMT.search(raw)
    if old is not None:
        return CallSiteLine(old.group(2), int(old.group(3)), old.group(1), "", "logfmt")
    klog = _KLOG.search(raw.rstrip("\r\n"))
    if klog is None:
        return None
    file, _, line = klog.group(2).rpartition(":")
    return CallSiteLine(file, int(line), _SEVERITY[klog.group(1)], klog.group(3), "klog")


def _json_site(raw: str, pos: str) -> CallSiteLine | None:
    level = _plain(raw, '"level":"')
    if level is None or not (level.isascii() and level.isalpha() and level.islower()):
        level = _group(_LEVEL, raw)
    msg = _plain(raw, '"msg":"')
    msg = _group(_MSG, raw) if msg is None else msg
    if level is None or msg is None:
        return None
    return _json_site_of(pos, level, msg)


def _plain(raw: str, key: str) -> str | None:
    """The value after the first ``key`` up to the next quote, when it holds no backslash: the
    common case, read with two ``find`` calls. The patterns' leftmost match starts at that
    same ``key`` and gives this value when it also has their form (a non-empty pos, a
    lowercase level: the callers check); None leaves the line to the patterns."""
    at = raw.find(key)
    if at < 0:
        return None
    start = at + len(key)
    end = raw.find('"', start)
    if end < 0:
        return None
    value = raw[start:end]
    return None if "\\" in value else value


def _group(pattern: re.Pattern[str], raw: str) -> str | None:
    found = pattern.search(raw)
    return None if found is None else found.group(1)


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
