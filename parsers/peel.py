"""Peel transport and paste layers off a line, before :mod:`parsers.classify` sees the body.

Layers are removed, never rewritten; each one peeled is named in ``prefixes`` so a record can
say how it was found. Order: decode → ANSI → markdown damage → grep path → `kubectl --prefix`
→ CRI node prefix or kubelet timestamp → markdown damage again. The stern default prefix is
ambiguous with plain text and is tried by the classifier only when nothing else matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from parsers.paths import source_from_path
from parsers.records import TIME_OUT_OF_RANGE, Timestamp
from parsers.timestamps import out_of_range, parse_time

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]", re.ASCII)
_BOM = "\ufeff"
# Kubelet `--timestamps` prefix, optionally followed by the CRI `<stream> <tags> ` fields.
TIME_PREFIX = re.compile(
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d))"
    r" (?:(stdout|stderr) ([FP])(?::[^ ]*)?(?: |$))?",
    re.ASCII,
)
_KUBECTL = re.compile(r"\[pod/([^/\]]+)/([^\]]+)\] ", re.ASCII)
_PATH = re.compile(r"([^\s:]+):(?:(\d+):)?", re.ASCII)
_PATH_SUFFIX = re.compile(r"\.(?:log(?:\.[\w-]+)*|gz|txt|jsonl|json)$", re.ASCII)
_FENCE = re.compile(r"\s*(?:`{3,}|~{3,})[\w+-]*\s*", re.ASCII)
_HTML_DAMAGE = re.compile(
    r"\s*</?(?:details|summary|pre|code|p|br)\b[^>]*>(?:[^<]*</summary>)?\s*", re.ASCII
)
_LEAD = re.compile(r"(?:`+|\*\*|> ?|- )", re.ASCII)
_TAIL = re.compile(r"\s*(?:`+|\*\*)\s*$", re.ASCII)


@dataclass(slots=True)
class Peeled:
    """A decoded line with its outer layers taken off. ``body`` is what gets classified."""

    text: str  # decoded line (BOM, newline and ANSI removed): the record's ``raw``
    body: str
    prefixes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    captured_at: Timestamp | None = None
    path: str | None = None
    line_hint: int | None = None
    pod: str | None = None
    container: str | None = None
    pod_namespace: str | None = None
    cri_stream: str | None = None
    cri_partial: bool = False
    markdown_only: bool = False


def decode_line(line: bytes) -> Peeled:
    """UTF-8 with replacement (flag ``utf8_replaced``); strips the newline, a CRLF `\\r` and a
    BOM (prefix ``bom``). Nothing is peeled yet: ``body`` is the whole text."""
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        text = line.decode()
        flags = []
    except UnicodeDecodeError:
        text = line.decode(errors="replace")
        flags = ["utf8_replaced"]
    if text.startswith(_BOM):
        text = text.lstrip(_BOM)
        return Peeled(text, text, ["bom"], flags)
    return Peeled(text, text, [], flags)


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def trim_markdown(body: str) -> tuple[str, bool]:
    """Strip inline-code backticks, fences, `**`, `> ` and `- ` at the start and backticks or
    `**` at the end (paste damage). Returns the remainder and whether anything was stripped."""
    start = 0
    while True:
        match = _LEAD.match(body, start)
        if match is None or match.end() == start:
            break
        start = match.end()
    tail = _TAIL.search(body, start)
    end = tail.start() if tail is not None else len(body)
    return body[start:end], bool(start or end != len(body))


def is_markdown_only(body: str) -> bool:
    """A fence (```` ```json ````), HTML `<details>` wrapper, or a lone `>` / `**` / `---`."""
    stripped = body.strip()
    if stripped in (">", "**", "*", "-", "---", "***", "___", "`"):
        return True
    return _FENCE.fullmatch(body) is not None or _HTML_DAMAGE.fullmatch(body) is not None


def _peel_path(peeled: Peeled) -> None:
    match = _PATH.match(peeled.body)
    if match is None:
        return
    token = match.group(1)
    if token.endswith((".go", ".s")) or not ("/" in token or _PATH_SUFFIX.search(token)):
        return
    info = source_from_path(token)
    peeled.path = token
    peeled.line_hint = int(match.group(2)) if match.group(2) else None
    peeled.pod, peeled.container, peeled.pod_namespace = info.pod, info.container, info.namespace
    peeled.body = peeled.body[match.end() :]
    peeled.prefixes.append("path")


def _peel_kubectl(peeled: Peeled) -> None:
    match = _KUBECTL.match(peeled.body)
    if match is not None:
        peeled.pod, peeled.container = match.group(1), match.group(2)
        peeled.body = peeled.body[match.end() :]
        peeled.prefixes.append("kubectl_prefix")


def peel_time_prefix(peeled: Peeled) -> bool:
    """CRI `<time> <stream> <F|P> ` or kubelet `<time> `: the capture time."""
    match = TIME_PREFIX.match(peeled.body)
    if match is None:
        return False
    stamp = parse_time(match.group(1))
    if stamp is None:
        if not out_of_range(match.group(1)):
            return False
        peeled.flags.append(TIME_OUT_OF_RANGE)  # a prefix all the same, with no usable time
    peeled.captured_at = stamp
    peeled.body = peeled.body[match.end() :]
    if match.group(2) is not None:
        peeled.cri_stream = match.group(2)
        peeled.cri_partial = match.group(3) == "P"
        peeled.prefixes.append("cri")
        if peeled.cri_stream == "stdout":
            peeled.flags.append("stdout")  # KubeVirt logs to stderr: unusual, keep and show it
    else:
        peeled.prefixes.append("kubelet")
    return True


def _peel_markdown(peeled: Peeled) -> None:
    if not peeled.body or (peeled.body[0] not in "`*>-~<" and peeled.body[-1] not in "`*"):
        return
    if is_markdown_only(peeled.body):
        peeled.body, peeled.markdown_only = "", True
        peeled.prefixes.append("markdown")
        return
    body, changed = trim_markdown(peeled.body)
    if changed:
        peeled.body = body
        peeled.markdown_only = not body.strip()
        peeled.prefixes.append("markdown")


def peel(line: bytes) -> Peeled:
    """Decode one physical line and remove every layer around its body.

    The common lines (a bare JSON object, or one behind a kubelet/CRI prefix) are decided on
    their first character and cost one regex match at most.
    """
    peeled = decode_line(line)
    if "\x1b" in peeled.text:
        peeled.text = peeled.body = strip_ansi(peeled.text)
        peeled.prefixes.append("ansi")
    first = peeled.body[:1]
    if first == "{":
        return peeled
    if first.isdigit() and peel_time_prefix(peeled):
        _peel_markdown(peeled)
        return peeled
    _peel_markdown(peeled)
    if peeled.markdown_only:
        return peeled
    _peel_path(peeled)
    _peel_kubectl(peeled)
    if peel_time_prefix(peeled):
        _peel_markdown(peeled)
    return peeled
