"""Classify one peeled body into a :class:`~parsers.draft.Draft` (the last step after
:mod:`parsers.peel`).

The first match wins, in this order: KubeVirt JSON (or a stern JSON envelope), klog text, 2018-era
logfmt, Go standard-library log or a bare-time annotation, stack or panic lines, dump markers,
framework headers; then (``fallback``) stern-prefixed and junk-prefixed bodies; else
``text_unknown``. Each line is classified on its own: the format can change within a file.
Indented bodies are tried again without the indentation (paste damage) unless they look like
stack lines.
"""

from __future__ import annotations

import re

from parsers.draft import DUMP_END, DUMP_START, HEADER, STACK_CONT, STACK_START, Draft, unknown
from parsers.klog import KLOG, STDLOG, klog_draft, stdlog_draft
from parsers.kvjson import draft_from_object, repair_ladder, salvage, stern_envelope
from parsers.logfmt import logfmt_draft, looks_like_logfmt
from parsers.peel import Peeled, peel_time_prefix
from parsers.records import (
    ANNOTATION,
    BLANK,
    CONTINUATION,
    DUMP_MARKER,
    FRAMEWORK_HEADER,
    TEXT_UNKNOWN,
)
from parsers.stack import continues_block, starts_block

_ANNOTATION = re.compile(r"\d{4}-\d\d-\d\d[T ][\d:.]+Z?:?\s*", re.ASCII)
_DUMP = re.compile(
    r"==== (START|END) logs for container (\S+) of pod ([^/\s]+)/(\S+) ====\s*", re.ASCII
)
_HEADER = re.compile(r"Pod name: (\S+)\s.*Pod phase: ", re.ASCII)
_JSON_HINTS = ('"level"', '"component"', '"msg"', '"timestamp"')
_STERN = (
    re.compile(r"([a-z0-9][-a-z0-9.]*) ([a-z0-9][-a-z0-9.]*) ([a-z0-9][-a-z0-9]*) ", re.ASCII),
    re.compile(r"()([a-z0-9][-a-z0-9.]*) ([a-z0-9][-a-z0-9]*) ", re.ASCII),
)
_STERN_SHORT_TIME = re.compile(r"(\d\d-\d\d \d\d:\d\d:\d\d) ", re.ASCII)


def json_body(body: str, *, prefixed: bool) -> Draft:
    """A body that starts with `{`: KubeVirt JSON, a stern `-o json` envelope, or damage."""
    obj, repairs = repair_ladder(body, mid_line_times=prefixed)
    if obj is None:
        return salvage(body)
    envelope = stern_envelope(obj)
    if envelope is not None:
        inner, identity = envelope
        draft = classify(inner, prefixed=False, fallback=False)
        draft.pod, draft.container = identity["pod"], identity["container"]
        draft.pod_namespace = identity["pod_namespace"]
        draft.prefixes.append("stern_json")
        return draft
    draft = draft_from_object(obj)
    draft.repairs = repairs
    return draft


def _by_shape(body: str, prefixed: bool) -> Draft | None:
    first = body[0]
    if first == "{":
        return json_body(body, prefixed=prefixed)
    if first in "IWEF":
        match = KLOG.match(body)
        if match is not None:
            return klog_draft(match)
    if looks_like_logfmt(body):
        draft = logfmt_draft(body)
        if draft is not None:
            return draft
    if first.isdigit():
        return _dated(body)
    return _marker_or_stack(body)


def _dated(body: str) -> Draft | None:
    match = STDLOG.match(body)
    if match is not None:
        return stdlog_draft(match)
    if _ANNOTATION.fullmatch(body):
        return unknown(ANNOTATION, body.strip())
    return None


def _marker_or_stack(body: str) -> Draft | None:
    if starts_block(body):
        return Draft(outcome=CONTINUATION, control=STACK_START, msg=body)
    if continues_block(body):
        return Draft(outcome=CONTINUATION, control=STACK_CONT, msg=body)
    if body.startswith("===="):
        match = _DUMP.fullmatch(body)
        if match is not None:
            control = DUMP_START if match.group(1) == "START" else DUMP_END
            draft = Draft(outcome=DUMP_MARKER, control=control, msg=body.strip())
            draft.container, draft.pod_namespace, draft.pod = match.group(2, 3, 4)
            return draft
    if body.startswith("Pod name: "):
        match = _HEADER.match(body)
        if match is not None:
            return Draft(outcome=FRAMEWORK_HEADER, control=HEADER, msg=body.strip(), pod=match[1])
    return None


def _indented(body: str, prefixed: bool) -> Draft:
    """TAB-indented lines are stack lines unless they hold a record; other indentation is paste
    damage and is stripped (recorded as the ``indent`` layer)."""
    if body == " >" or body.startswith(" > "):
        return Draft(outcome=CONTINUATION, control=STACK_CONT, msg=body)
    stripped = body.lstrip()
    if not stripped:
        return unknown(BLANK)
    draft = _by_shape(stripped, prefixed)
    if draft is not None and (draft.is_record or not body.startswith("\t")):
        draft.prefixes.append("indent")
        return draft
    if body.startswith("\t") or continues_block(stripped) or continues_block(body):
        return Draft(outcome=CONTINUATION, control=STACK_CONT, msg=body)
    return unknown(TEXT_UNKNOWN, stripped)


def _junk_prefix(body: str, prefixed: bool) -> Draft | None:
    """`ion{"component":…}`: parse from the first `{"` (the ``junk_prefix`` repair)."""
    start = body.find('{"')
    if start <= 0 or not any(hint in body for hint in _JSON_HINTS):
        return None
    draft = json_body(body[start:], prefixed=prefixed)
    draft.repairs.insert(0, "junk_prefix")
    return draft


def _stern(body: str) -> Draft | None:
    """`[ns] pod container [time] body` (stern's default output). Accepted only when
    the rest is a known shape, as the prefix is otherwise indistinguishable from text."""
    for pattern in _STERN:
        match = pattern.match(body)
        if match is None:
            continue
        rest = Peeled(body, body[match.end() :])
        short = _STERN_SHORT_TIME.match(rest.body)
        if short is not None:
            rest.body = rest.body[short.end() :]
        elif rest.body[:1].isdigit():
            peel_time_prefix(rest)
        if not rest.body:
            continue
        draft = classify(rest.body, prefixed=False, fallback=False)
        if draft.is_record:
            draft.pod_namespace = match.group(1) or None
            draft.pod, draft.container = match.group(2), match.group(3)
            draft.captured_at = rest.captured_at
            if short is not None:
                draft.extra.append(("stern_time", short.group(1)))
            draft.prefixes.append("stern")
            return draft
    return None


def classify(body: str, *, prefixed: bool = False, fallback: bool = True) -> Draft:
    """Classify a body. ``prefixed``: a kubelet/CRI prefix was peeled (enables the mid-line
    timestamp repair). ``fallback``: also try junk-prefixed JSON and stern prefixes."""
    if not body or body.isspace():
        return unknown(BLANK)
    if body[0] in " \t\u00a0":
        return _indented(body, prefixed)
    draft = _by_shape(body, prefixed)
    if draft is not None:
        return draft
    if fallback:
        draft = _stern(body) or _junk_prefix(body, prefixed)
        if draft is not None:
            return draft
    return unknown(TEXT_UNKNOWN, body.strip())
