"""A plain directory or single file: each file is sniffed by content."""

from __future__ import annotations

import re

import orjson

from kvtrace.errors import UnsafeBundleError
from kvtrace.evidence import EVENT, LEASE, POD, REVISION, VM, VMI, Evidence
from kvtrace.sources.builder import EvidenceBuilder
from kvtrace.sources.layouts.inspect import add_events_table
from kvtrace.sources.logstores import add_export
from kvtrace.sources.objects import PLURAL_KINDS
from kvtrace.sources.safety import DECODE_ERRORS, open_capped
from parsers.envelopes import sniff_envelope
from parsers.manifests import looks_like_events_table
from parsers.paths import source_from_path

SNIFF_BYTES = 64 * 1024
BINARY_PROBE = 1024  # bytes whose text-ness decides a file without NUL bytes
NOT_TEXT_SHARE = 0.3
_MANIFEST_LINE = re.compile(r"^(?:apiVersion|kind|items|metadata):|^- apiVersion:|^---\s*$")
_OBJECT_KEYS = ("apiVersion", "metadata", "items")
_EXPECTED_KINDS = (VM, VMI, POD, EVENT, REVISION, LEASE)

MANIFEST, LOG, EVENTS, BINARY, EMPTY, DESCRIBE, HTML = (
    "manifest",
    "log",
    "events",
    "binary",
    "empty",
    "describe",
    "html",
)
BUNDLE_MANIFEST = "manifest.json"
# A manifest.json that is JSON but no BundleManifest (kvtrace_bundle checked it first) is some
# tool's metadata: never a log.
_NOT_OUR_MANIFEST = "manifest.json is not a kvtrace BundleManifest nor Kubernetes objects: not read"
SKIP_REASONS = {
    BINARY: (
        "binary file (NUL bytes in its first line, or its first KiB is not text): "
        "not a log, YAML or JSON"
    ),
    EMPTY: "empty file",
    DESCRIBE: "kubectl describe output is not read; export the object with kubectl get -o yaml",
    HTML: "HTML file: not evidence kvtrace reads",
}


def sniff(head: bytes) -> str:
    """What the first bytes of a file look like: manifest, log, events table or a skip class."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if not head.strip():
        return EMPTY
    if looks_binary(head):
        return BINARY
    text = head.decode("utf-8", errors="replace")
    lines = [line.rstrip("\r") for line in text.split("\n") if line.strip()]
    if not lines:
        return BINARY  # only control characters such as \x1c
    first = lines[0].strip()
    if first.lower().startswith(("<!doctype html", "<html")):
        return HTML
    if looks_like_events_table(text):
        return EVENTS
    if first.startswith("Name:") and any(line.startswith("Namespace:") for line in lines[:5]):
        return DESCRIBE
    if first.startswith(("{", "[")):
        return _sniff_json(first)
    return MANIFEST if any(_MANIFEST_LINE.match(line) for line in lines[:20]) else LOG


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first line, or a first KiB that is not text: more than
    :data:`NOT_TEXT_SHARE` of it undecodable or control characters (a log with a few damaged
    bytes stays a log). Whole text lines before a run of NUL bytes are a log with a damaged
    tail — what a node that lost power leaves in a preallocated file — and are read; the line
    reader reports the NUL run."""
    nul = head.find(b"\x00", 0, 8192)
    if nul != -1:
        if b"\n" not in head[:nul]:
            return True
        head = head[:nul]
    text = head[:BINARY_PROBE].decode("utf-8", errors="replace")
    odd = sum(1 for char in text if char == "\ufffd" or (char < " " and char not in "\t\n\r\f\x1b"))
    return bool(text) and odd > NOT_TEXT_SHARE * len(text)


def _sniff_json(first: str) -> str:
    """Pretty JSON and lists are manifests; one complete object per line is a JSON log."""
    if first in ("{", "[") or first.startswith(("[{", "[ {", "[]")):
        return MANIFEST
    try:
        line = orjson.loads(first)
    except orjson.JSONDecodeError:
        return MANIFEST if '"apiVersion"' in first[:4096] else LOG
    if isinstance(line, dict) and any(key in line for key in _OBJECT_KEYS):
        return MANIFEST
    return LOG


def _head(builder: EvidenceBuilder, relative: str) -> bytes | None:
    try:
        with open_capped(builder.path(relative), builder.limits.max_log_bytes, relative) as stream:
            return stream.read(SNIFF_BYTES)
    except UnsafeBundleError as exc:
        builder.skip(relative, str(exc))
    except DECODE_ERRORS as exc:
        builder.skip(relative, f"unreadable: {exc}")
    return None


def read_plain(builder: EvidenceBuilder) -> Evidence:
    for relative in builder.tree.files:
        head = _head(builder, relative)
        if head is None:
            continue
        if sniff_envelope(head) is not None:
            add_export(builder, relative)
        else:
            _route(builder, relative, sniff(head))
    _note_gaps(builder)
    return builder.build("plain", "low")


def _route(builder: EvidenceBuilder, relative: str, what: str) -> None:
    if what == LOG and relative.rsplit("/", 1)[-1] == BUNDLE_MANIFEST:
        builder.skip(relative, _NOT_OUR_MANIFEST)
    elif what == MANIFEST:
        stem = relative.rsplit("/", 1)[-1].split(".", 1)[0]
        before = len(builder.skipped)
        if builder.add_manifest(relative, PLURAL_KINDS.get(stem)) == 0 and (
            len(builder.skipped) == before
        ):
            builder.skip(relative, "looks like YAML/JSON but holds no Kubernetes objects")
    elif what == EVENTS:
        add_events_table(builder, relative, namespace=None)
    elif what == LOG:
        builder.add_log(relative, source_from_path(relative), prefixed=None)
    else:
        builder.skip(relative, SKIP_REASONS[what])


def _note_gaps(builder: EvidenceBuilder) -> None:
    present = builder.index.by_kind()
    absent = [kind for kind in _EXPECTED_KINDS if not present.get(kind)]
    if absent:
        builder.missing.append(f"no {', '.join(absent)} objects among these files")
    if not builder.logs:
        builder.missing.append("no log files among these files")
