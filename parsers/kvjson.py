"""KubeVirt JSON log lines and the invalid-JSON repair ladder.

go-kit's JSON logger writes one object per line with sorted keys (a Go map encoded by
``encoding/json``: vendor/github.com/go-kit/log/json_logger.go:23-37, and the KubeVirt logger
log.go:129, at v1.9.0). Nothing
here depends on key order, and unknown keys land in ``extra``. A body that does not parse goes
down the ladder of named repairs; what still fails is salvaged by regex into a ``partial`` record.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from parsers.draft import Draft
from parsers.records import JSON_INVALID, JSON_TRUNCATED, TIME_OUT_OF_RANGE, Timestamp
from parsers.timestamps import out_of_range, parse_time

SHAPE = "kubevirt_json"
_KNOWN = frozenset(
    {"component", "kind", "level", "msg", "name", "namespace", "pos", "reason", "timestamp", "uid"}
)
_LEVELS = {
    "info": "info",
    "warning": "warning",
    "warn": "warning",
    "error": "error",
    "err": "error",
    "fatal": "fatal",
    "panic": "fatal",
    "debug": "info",  # KubeVirt has no debug level; libvirt debug lines are relayed as info
}
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", re.ASCII
)

# Strings (possibly unterminated at the end of the text) and brackets outside strings.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*("?)|[{}\[\]]', re.DOTALL | re.ASCII)
_TRAILING_COMMA = re.compile(r",\s*(?=[}\]])", re.ASCII)
_KUBELET_TIME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) ", re.ASCII
)
_SMART = str.maketrans({"\u00a0": " ", "“": '"', "”": '"', "„": '"', "″": '"', "‘": "'", "’": "'"})
_SALVAGE = re.compile(
    r'"(level|timestamp|pos|msg|name|namespace|uid|reason|component|kind)"\s*:\s*'
    r'"((?:[^"\\]|\\.)*)',
    re.DOTALL | re.ASCII,
)


def loads_object(text: str) -> dict[str, Any] | None:
    """Strict parse; None unless the text is exactly one JSON object."""
    try:
        value = orjson.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def brace_state(text: str) -> tuple[int, bool]:
    """(bracket depth outside strings, whether the text ends inside a string)."""
    if '"' not in text:  # no strings: counting is enough (and fast on huge garbage)
        return text.count("{") + text.count("[") - text.count("}") - text.count("]"), False
    depth, open_string = 0, False
    for match in _TOKENS.finditer(text):
        token = match.group(0)
        if token[0] == '"':
            open_string = match.group(1) == ""
        else:
            depth += 1 if token in "{[" else -1
    return depth, open_string


def is_cut_off(text: str) -> bool:
    """True when the object was cut off (unclosed brackets or string): ``json_truncated``."""
    depth, open_string = brace_state(text)
    return depth > 0 or open_string


def _cut_junk(text: str) -> str:
    start = text.find('{"')
    return text[start:] if start > 0 else text


def _drop_trailing_commas(text: str) -> str:
    return _TRAILING_COMMA.sub("", text)


def _close_final_string(text: str) -> str:
    """`…"timestamp":"2025-03-07T09:14:00.000113Z}` → insert the missing `"` before `}`."""
    stripped = text.rstrip()
    if not stripped.endswith("}"):
        return text
    _, open_string = brace_state(stripped[:-1])
    return stripped[:-1] + '"}' if open_string else text


def _normalise_quotes(text: str) -> str:
    return text.translate(_SMART)


def _drop_mid_line_times(text: str) -> str:
    return _KUBELET_TIME.sub("", text)


_LADDER: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("junk_prefix", _cut_junk),
    ("trailing_comma", _drop_trailing_commas),
    ("unterminated_string", _close_final_string),
    ("smart_quotes", _normalise_quotes),
)


def repair_ladder(text: str, *, mid_line_times: bool) -> tuple[dict[str, Any] | None, list[str]]:
    """A strict parse, then the repairs of ``_LADDER`` in order (plus the kubelet mid-line
    timestamp cut for prefixed bodies), each applied on top of the previous ones; returns the
    object and the repairs that changed text."""
    value = loads_object(text)
    if value is not None:
        return value, []
    steps = _LADDER + ((("mid_line_timestamp", _drop_mid_line_times),) if mid_line_times else ())
    repairs: list[str] = []
    for name, repair in steps:
        fixed = repair(text)
        if fixed == text:
            continue
        text = fixed
        repairs.append(name)
        value = loads_object(text)
        if value is not None:
            return value, repairs
    return None, repairs


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except (TypeError, ValueError):
        return str(value)


def _optional(value: object) -> str | None:
    """Empty strings and absent keys both mean "not given" (`kind` is often "")."""
    if value.__class__ is str:
        return value or None
    return None if value is None else _text(value)


def normalise_level(value: object, flags: list[str]) -> str:
    """`warning`, not `warn`; accept case and aliases defensively, flag what is unknown."""
    if value is None:
        flags.append("level_missing")
        return ""
    level = _text(value).strip().lower()
    known = _LEVELS.get(level)
    if known is None:
        flags.append("level_unknown")
        return level
    return known


def _time_of(obj: dict[str, Any], flags: list[str]) -> Timestamp | None:
    stamp = obj.get("timestamp")
    time = parse_time(stamp) if isinstance(stamp, str) else None
    if time is None and isinstance(obj.get("ts"), str):
        time = parse_time(obj["ts"])  # the stdlib adapter's own clock: 1 s, local time
        flags.append("time_from_ts")
    if time is None:
        refused = out_of_range(stamp if isinstance(stamp, str) else obj.get("ts"))
        flags.append(TIME_OUT_OF_RANGE if refused else "no_time")
    return time


def _identity_flags(name: str | None, uid: str | None, flags: list[str]) -> None:
    if uid is not None and not _UUID.fullmatch(uid):
        flags.append("uid_not_uuid")
    if (name is not None and _is_redacted(name)) or (uid is not None and _is_redacted(uid)):
        flags.append("redacted")


def _is_redacted(value: str) -> bool:
    """Hand-redacted pastes: `pg-…`, `pg-...`, `<redacted>`."""
    return "…" in value or "..." in value or "redacted" in value.lower()


def draft_from_object(obj: dict[str, Any], shape: str = SHAPE) -> Draft:
    """Map one decoded KubeVirt log object onto the record schema (the hot path: keep lean)."""
    flags: list[str] = []
    get = obj.get
    msg = get("msg")
    name, uid = _optional(get("name")), _optional(get("uid"))
    if name is not None or uid is not None:
        _identity_flags(name, uid, flags)
    draft = Draft(
        shape=shape,
        level=normalise_level(get("level"), flags),
        msg="" if msg is None else _text(msg).strip(),
        time=_time_of(obj, flags),
        pos=_optional(get("pos")),
        component=_optional(get("component")),
        namespace=_optional(get("namespace")),
        name=name,
        kind=_optional(get("kind")),
        uid=uid,
        reason=_optional(get("reason")),
        flags=flags,
    )
    if not _KNOWN.issuperset(obj):
        draft.extra = [(k, _text(v)) for k, v in sorted(obj.items()) if k not in _KNOWN]
    return draft


def stern_envelope(obj: dict[str, Any]) -> tuple[str, dict[str, str | None]] | None:
    """Unwrap `stern -o json`: the inner body plus the pod identity fields."""
    message = obj.get("message")
    if not isinstance(message, str) or "podName" not in obj:
        return None
    identity = {
        "pod": _optional(obj.get("podName")),
        "container": _optional(obj.get("containerName")),
        "pod_namespace": _optional(obj.get("namespace")),
    }
    return message.rstrip("\r\n"), identity


def _unescape(value: str) -> str:
    try:
        decoded = orjson.loads(f'"{value}"')
    except ValueError:
        return value
    return decoded if isinstance(decoded, str) else value


def salvage(text: str) -> Draft:
    """Step 7: regex-salvage `"key":"value"` pairs into a ``partial`` record, counted as
    ``json_truncated`` (cut off) or ``json_invalid``. Without any field, ``shape`` stays ""."""
    cut_off = is_cut_off(text)
    fields = {m.group(1): _unescape(m.group(2)) for m in _SALVAGE.finditer(text)}
    outcome = JSON_TRUNCATED if cut_off else JSON_INVALID
    if not fields:
        return Draft(outcome=outcome, joinable=cut_off, msg=text.strip())
    draft = draft_from_object(dict(fields))
    draft.outcome = outcome
    draft.joinable = cut_off
    draft.flags.append("partial")
    return draft
