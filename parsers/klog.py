"""klog text lines and Go standard-library log lines.

klog headers carry no year and no zone: the draft keeps the raw clock in ``klog_clock`` and the
stream places it next to an anchor (:func:`parsers.timestamps.parse_klog_time`). Structured klog
(`"msg" key=value …`) is split into ``msg`` and ``extra``; a value written as ``key=<``
continues on the following TAB-indented lines up to a lone `` >`` and is merged by the stream as
``continuation``.
"""

from __future__ import annotations

import re

import orjson

from parsers.draft import Draft
from parsers.records import TIME_OUT_OF_RANGE
from parsers.timestamps import out_of_range, parse_time

KLOG_SHAPE = "klog"
STDLOG_SHAPE = "stdlog"
_SEVERITY = {"I": "info", "W": "warning", "E": "error", "F": "fatal"}
KLOG = re.compile(
    r"(?P<sev>[IWEF])(?P<mmdd>\d{4}) (?P<t>\d\d:\d\d:\d\d\.\d{6})\s+(?P<tid>\d+) "
    r"(?P<file>[^ :\]]+):(?P<line>\d+)\] ?(?P<msg>.*)",
    re.DOTALL | re.ASCII,
)
STDLOG = re.compile(
    r"(?P<t>\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?) (?P<msg>.*)", re.DOTALL | re.ASCII
)
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.ASCII)
_PAIR = re.compile(r'\s*([\w.-]+)=("(?:[^"\\]|\\.)*"|<$|\S*)', re.ASCII)
# Leader election names its lock as <ns>/<name> (``... lease kubevirt/virt-controller``).
_LOCK = re.compile(r"(?:lease|lock) (?P<lock>[a-z0-9.-]+/[a-z0-9.-]+)", re.ASCII)


def unquote(token: str) -> str:
    """A Go `%q` string; falls back to stripping the quotes."""
    try:
        value = orjson.loads(token)
    except ValueError:
        return token[1:-1]
    return value if isinstance(value, str) else token[1:-1]


def parse_pairs(text: str, draft: Draft) -> str:
    """Read `key=value` pairs into ``draft``; returns what could not be read (normally "")."""
    at = 0
    while at < len(text):
        match = _PAIR.match(text, at)
        if match is None or match.end() == at:
            return text[at:].strip()
        key, value = match.group(1), match.group(2)
        if value == "<":
            draft.open_key = key
        elif key == "err" and draft.reason is None:
            draft.reason = unquote(value) if value.startswith('"') else value
        else:
            draft.extra.append((key, unquote(value) if value.startswith('"') else value))
        at = match.end()
    return ""


def _structured(msg: str, draft: Draft) -> None:
    quoted = _QUOTED.match(msg)
    if quoted is None:
        draft.msg = msg.strip()
        return
    draft.msg = unquote(quoted.group(0)).strip()
    rest = parse_pairs(msg[quoted.end() :], draft)
    if rest:
        draft.extra.append(("unparsed_tail", rest))


def klog_draft(match: re.Match[str]) -> Draft:
    """A matched klog header line; the time is resolved later from ``klog_clock``."""
    draft = Draft(shape=KLOG_SHAPE, level=_SEVERITY[match.group("sev")])
    draft.pos = f"{match.group('file')}:{match.group('line')}"
    draft.klog_clock = (match.group("mmdd"), match.group("t"))
    _structured(match.group("msg"), draft)
    if draft.pos.startswith("leaderelection.go"):
        lock = _LOCK.search(draft.msg)
        if lock is not None:
            draft.extra.append(("lock", lock.group("lock").rstrip(".")))
    draft.extra.sort()
    return draft


def stdlog_draft(match: re.Match[str]) -> Draft:
    """`2019/06/03 14:52:17 msg`: local time, 1 s, no level (std log has none)."""
    draft = Draft(shape=STDLOG_SHAPE, level="info", msg=match.group("msg").strip())
    draft.time = parse_time(match.group("t"))
    if draft.time is None and out_of_range(match.group("t")):
        draft.flags.append(TIME_OUT_OF_RANGE)
    return draft
