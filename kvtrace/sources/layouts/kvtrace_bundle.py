"""kvtrace's own bundle (docs/bundle-format.md): manifest.json, objects/ and logs/."""

from __future__ import annotations

from typing import Any

import orjson

from kvtrace.errors import InputError
from kvtrace.evidence import Evidence
from kvtrace.sources.builder import EvidenceBuilder, parse_instant
from kvtrace.sources.layouts.inspect import files_under
from kvtrace.sources.objects import PLURAL_KINDS
from kvtrace.sources.safety import DECODE_ERRORS, read_capped
from kvtrace.sources.walk import BundleTree
from parsers.paths import source_from_path
from parsers.records import SourceInfo

MANIFEST = "manifest.json"
MANIFEST_KIND = "BundleManifest"
FORMAT_VERSION = 1
_MANIFEST_CAP = 64 * 1024 * 1024


def find_manifest(tree: BundleTree) -> tuple[str, dict[str, Any]] | None:
    """``(root, manifest)`` for a ``manifest.json`` of kind BundleManifest at depth 0 or 1.

    A ``manifest.json`` there that cannot be read or parsed is an error: falling back to another
    layout would silently lose what the manifest says was collected and missed.
    """
    for relative in tree.files:
        if relative.rsplit("/", 1)[-1] != MANIFEST or relative.count("/") > 1:
            continue
        manifest = _load(tree, relative)
        if manifest is not None and manifest.get("kind") == MANIFEST_KIND:
            return (relative.rsplit("/", 1)[0] if "/" in relative else ""), manifest
    return None


def find_roots(tree: BundleTree, max_depth: int) -> list[str]:
    """The directory of every ``manifest.json`` of kind BundleManifest at most ``max_depth``
    levels down. One at depth 0 or 1 that cannot be read is an error, as in
    :func:`find_manifest`; deeper down it is some other tool's file, left to the bundle's own
    layout."""
    roots = []
    for relative in tree.files:
        if relative.rsplit("/", 1)[-1] != MANIFEST or relative.count("/") > max_depth:
            continue
        try:
            manifest = _load(tree, relative)
        except InputError:
            if relative.count("/") <= 1:
                raise
            continue
        if manifest is not None and manifest.get("kind") == MANIFEST_KIND:
            roots.append(relative.rsplit("/", 1)[0] if "/" in relative else "")
    return roots


def _load(tree: BundleTree, relative: str) -> dict[str, Any] | None:
    """The manifest's JSON object; None for valid JSON that is not an object (not ours)."""
    try:
        loaded = orjson.loads(read_capped(tree.root / relative, _MANIFEST_CAP, relative))
    except orjson.JSONDecodeError as exc:
        raise _unusable(tree, relative, f"is not valid JSON ({exc})") from None
    except (*DECODE_ERRORS, InputError) as exc:
        raise _unusable(tree, relative, f"cannot be read ({_why(exc)})") from None
    return loaded if isinstance(loaded, dict) else None


def _unusable(tree: BundleTree, relative: str, problem: str) -> InputError:
    return InputError(
        f"{tree.origin}: {relative} {problem}; a kvtrace bundle cannot be read without it: "
        "re-collect with kvtrace collect, or repair or remove the file to read the rest as "
        "plain files"
    )


def _why(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc)


def read_kvtrace_bundle(builder: EvidenceBuilder, root: str, manifest: dict[str, Any]) -> Evidence:
    _check_version(builder, manifest)
    builder.manifest = manifest
    builder.captured_at = parse_instant(manifest.get("capturedAt"))
    version = manifest.get("kubevirtVersion")
    builder.kubevirt_version = version if isinstance(version, str) and version else None
    prefix = f"{root}/" if root else ""
    before = len(builder.skipped), len(builder.missing)
    listed_objects = _read_collected(builder, prefix, manifest)
    listed_logs = _read_logs(builder, prefix, manifest)
    complete = (len(builder.skipped), len(builder.missing)) == before
    _read_unlisted(builder, root, listed_objects | listed_logs)
    builder.missing.extend(_missing(manifest))
    return builder.build("kvtrace", "full" if complete else "low")


def _check_version(builder: EvidenceBuilder, manifest: dict[str, Any]) -> None:
    version = manifest.get("formatVersion", FORMAT_VERSION)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise InputError(
            f"{builder.tree.origin}: bundle formatVersion {version!r} is newer than this kvtrace "
            f"reads ({FORMAT_VERSION}); upgrade kvtrace"
        )


def _entries(manifest: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = manifest.get(key)
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def _read_collected(builder: EvidenceBuilder, prefix: str, manifest: dict[str, Any]) -> set[str]:
    listed: set[str] = set()
    files = set(builder.tree.files)
    for entry in _entries(manifest, "collected"):
        relative = prefix + str(entry.get("file", ""))
        listed.add(relative)
        if relative not in files:
            builder.skip(relative, "listed in manifest.json but absent from the bundle")
            continue
        kind = entry.get("kind")
        kind = kind if isinstance(kind, str) else None
        skips = len(builder.skipped)
        found = builder.add_manifest(relative, kind, from_list=True)
        if len(builder.skipped) == skips:  # else the skip already says what went wrong
            _check_count(builder, relative, kind, entry.get("count"), found)
    return listed


def _check_count(
    builder: EvidenceBuilder, relative: str, kind: str | None, counted: Any, found: int
) -> None:
    """The manifest's ``count`` is what collect wrote: a file holding another number lost
    objects (truncated, emptied, hand-edited), and the coverage report must say so."""
    if not isinstance(counted, int) or isinstance(counted, bool) or counted == found:
        return
    builder.missing.append(
        f"{relative} holds {found} object(s) but manifest.json counts {counted} "
        f"{kind or 'object'}(s) collected: the file is damaged or truncated; re-collect with "
        "kvtrace collect"
    )


def _read_logs(builder: EvidenceBuilder, prefix: str, manifest: dict[str, Any]) -> set[str]:
    listed: set[str] = set()
    files = set(builder.tree.files)
    for entry in _entries(manifest, "logs"):
        relative = prefix + str(entry.get("file", ""))
        listed.add(relative)
        if relative not in files:
            builder.skip(relative, "listed in manifest.json but absent from the bundle")
        elif relative == prefix + MANIFEST:
            builder.skip(relative, "manifest.json lists itself as a log: it is not one, not read")
        else:
            builder.add_log(
                relative, _log_source(relative, entry), entry.get("timestamps") is not False
            )
    return listed


def _log_source(relative: str, entry: dict[str, Any]) -> SourceInfo:
    def text(key: str) -> str | None:
        value = entry.get(key)
        return value if isinstance(value, str) and value else None

    return SourceInfo(relative, text("pod"), text("namespace"), text("container"), text("instance"))


def _read_unlisted(builder: EvidenceBuilder, root: str, listed: set[str]) -> None:
    """Files the manifest does not mention are still evidence: read them by their path."""
    for relative, parts in files_under(builder, root):
        if relative in listed:
            continue
        if parts[0] == "objects" and len(parts) == 2:
            stem = parts[1].split(".", 1)[0]
            if stem in PLURAL_KINDS:
                builder.add_manifest(relative, PLURAL_KINDS[stem], from_list=True)
        elif parts[0] == "logs" and len(parts) == 5:
            builder.add_log(relative, source_from_path(relative), prefixed=True)


def _missing(manifest: dict[str, Any]) -> list[str]:
    sentences = []
    for entry in _entries(manifest, "missing"):
        what = entry.get("kind") or entry.get("file") or "something"
        where = f" in {entry['namespace']}" if entry.get("namespace") else ""
        sentences.append(
            f"{what}{where} was not collected: {entry.get('reason') or 'no reason given'}"
        )
    return sentences
