"""Kubernetes manifests as bytes in, object dicts out.

Pure: no kvtrace imports, no file system. Errors are returned as :class:`ManifestError` values,
never raised: garbage in gives an error value out.

What is tolerated:

- JSON (sniffed first, also inside ``.yaml`` files), multi-document YAML, the ``---------------``
  separators of must-gather OLM files;
- ``kind: List`` / ``…List`` with ``items``: items inherit ``kind`` / ``apiVersion`` from the list
  kind (``PodList`` → ``Pod``) or from ``default_kind``;
- YAML loaded **without implicit timestamps** and without YAML 1.1 ``yes/no/on/off`` booleans:
  times and such words stay strings and go through the one time parser (:mod:`parsers.timestamps`);
- nothing that would exhaust memory: YAML over :data:`~parsers.yamlguard.MAX_YAML_BYTES`
  (256 MiB), or over :data:`~parsers.yamlguard.MAX_NODES` nodes with aliases expanded (an alias
  bomb), or with an alias to a node that contains it, is refused with an error naming the file;
- paste damage: on a YAML error, lines before the first ``apiVersion|kind|items|metadata`` key and
  ``...`` lines are dropped and the load retried; each repair is named in ``repairs``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from parsers.yamlguard import MAX_YAML_BYTES, yaml_refusal

if TYPE_CHECKING:
    import yaml


@cache
def plain_time_loader() -> type[yaml.SafeLoader]:
    """SafeLoader without timestamp resolution and with YAML 1.2 booleans only. Built on first
    use: a JSON bundle or a log never needs YAML, and importing it is a good part of start-up."""
    import yaml

    base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class PlainTimeLoader(base):  # type: ignore[misc,valid-type]
        """SafeLoader without timestamp resolution and with YAML 1.2 booleans only."""

    loader: type[yaml.SafeLoader] = PlainTimeLoader
    loader.yaml_implicit_resolvers = {
        first: [
            (tag, regexp)
            for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool",
        re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"),
    )
    return loader


_OLM_SEPARATOR = re.compile(r"^-{4,}[ \t]*\r?$", re.MULTILINE)
_FIRST_KEY = re.compile(r"^(?:apiVersion|kind|items|metadata):|^- apiVersion:")
_ELLIPSIS = re.compile(r"^[ \t]*\.\.\.[ \t]*$")
_LIST_SUFFIX = "List"


@dataclass(frozen=True)
class ManifestError:
    """Why a file could not be read as manifests; ``line``/``column`` are 1-based."""

    path: str
    line: int | None
    column: int | None
    message: str

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


@dataclass
class ManifestLoad:
    """The objects found in one input, the repairs applied, or the error that stopped it."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    error: ManifestError | None = None


def load_manifests(
    data: bytes,
    path: str = "<bytes>",
    default_kind: str | None = None,
    max_yaml_bytes: int = MAX_YAML_BYTES,
) -> ManifestLoad:
    """Parse ``data`` (JSON or YAML, one or many documents, lists expanded) into object dicts.

    YAML past ``max_yaml_bytes`` is refused with an error (loaded YAML takes ten times its size
    and more); so is YAML that would hold more nodes than :data:`parsers.yamlguard.MAX_NODES`
    once its aliases are expanded (:func:`parsers.yamlguard.yaml_refusal`)."""
    text_bytes = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if _looks_like_json(text_bytes):
        try:
            return ManifestLoad(objects=expand_lists(orjson.loads(text_bytes), default_kind))
        except orjson.JSONDecodeError:
            pass  # fall through: YAML is a superset, and its errors carry line/column
    if len(text_bytes) > max_yaml_bytes:
        return ManifestLoad(
            error=ManifestError(path, None, None, _too_big(len(text_bytes), max_yaml_bytes))
        )
    text = text_bytes.decode("utf-8", errors="replace")
    return _load_yaml_with_repairs(text, path, default_kind)


def _too_big(size: int, cap: int) -> str:
    return (
        f"{size} bytes of YAML, over the {cap}-byte cap for one YAML file: refused to bound "
        "memory; split the file, or give it as JSON"
    )


def _looks_like_json(data: bytes) -> bool:
    head = data.lstrip()[:1]
    return head in (b"{", b"[")


def _load_yaml_with_repairs(text: str, path: str, default_kind: str | None) -> ManifestLoad:
    """Load YAML; on failure walk the paste-repair ladder (``_repair``) and retry once. The text
    is split into lines only for a repair: a list of a huge file's lines costs more than it."""
    text = _split_olm(text)
    docs, error = _load_yaml(text, None, path)
    if error is None:
        return ManifestLoad(objects=_expand_docs(docs, default_kind))
    lines = text.split("\n")
    lines, numbers, repairs = _repair(lines, list(range(1, len(lines) + 1)))
    if not repairs:
        return ManifestLoad(error=error)
    docs, retry_error = _load_yaml("\n".join(lines), numbers, path)
    if retry_error is not None:
        return ManifestLoad(repairs=repairs, error=retry_error)
    return ManifestLoad(objects=_expand_docs(docs, default_kind), repairs=repairs)


def _split_olm(text: str) -> str:
    """Turn must-gather OLM ``---------------`` separators into YAML document markers."""
    if "----" not in text:
        return text
    return _OLM_SEPARATOR.sub("---", text)


def _load_yaml(
    text: str, numbers: list[int] | None, path: str
) -> tuple[list[Any], ManifestError | None]:
    """All documents, or the first error with its line mapped back to the original input
    (``numbers``: the original line of each line of ``text``; None when they are the same)."""
    import yaml

    loader = plain_time_loader()
    refusal = yaml_refusal(text, loader)
    if refusal is not None:
        return [], ManifestError(path, _original_line(refusal.line, numbers), None, refusal.message)
    try:
        return list(yaml.load_all(text, Loader=loader)), None
    except yaml.MarkedYAMLError as exc:
        return [], _marked_error(exc, numbers, path)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        return [], ManifestError(path, None, None, f"not YAML or JSON: {exc}")


def _marked_error(exc: yaml.MarkedYAMLError, numbers: list[int] | None, path: str) -> ManifestError:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    if mark is None:
        return ManifestError(path, None, None, problem)
    return ManifestError(path, _original_line(mark.line, numbers), mark.column + 1, problem)


def _original_line(index: int, numbers: list[int] | None) -> int:
    """The 1-based line in the original input of 0-based line ``index`` of the loaded text."""
    if not numbers:
        return index + 1
    return numbers[min(index, len(numbers) - 1)]


def _repair(lines: list[str], numbers: list[int]) -> tuple[list[str], list[int], list[str]]:
    """Drop lines before the first manifest key, then ``...`` lines (the paste ladder)."""
    repairs: list[str] = []
    start = next((i for i, line in enumerate(lines) if _FIRST_KEY.match(line)), 0)
    if start > 0:
        lines, numbers = lines[start:], numbers[start:]
        repairs.append(f"dropped {start} leading line(s) before the first manifest key")
    keep = [i for i, line in enumerate(lines) if not _ELLIPSIS.match(line)]
    if len(keep) < len(lines):
        repairs.append(f"dropped {len(lines) - len(keep)} '...' line(s)")
        lines, numbers = [lines[i] for i in keep], [numbers[i] for i in keep]
    return lines, numbers, repairs


def _expand_docs(docs: list[Any], default_kind: str | None) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for doc in docs:
        objects.extend(expand_lists(doc, default_kind))
    return objects


def expand_lists(doc: Any, default_kind: str | None = None) -> list[dict[str, Any]]:
    """Objects in one loaded document: a list's items (kind inherited), or the object itself.

    Non-object documents (a stray scalar, ``null``) yield nothing.
    """
    return list(_iter_objects(doc, default_kind, None))


def _iter_objects(
    doc: Any, default_kind: str | None, default_api: str | None
) -> Iterator[dict[str, Any]]:
    """Depth first, with an explicit stack: nesting depth cannot overflow Python's, and a list
    or object reached a second time (a YAML alias, a structure that contains itself) is skipped,
    so the walk ends and visits each container once."""
    pending: list[tuple[Any, str | None, str | None]] = [(doc, default_kind, default_api)]
    seen: set[int] = set()
    while pending:
        node, kind, api = pending.pop()
        if not isinstance(node, (list, dict)) or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, list):
            pending.extend((item, kind, api) for item in reversed(node))
        elif _is_list(node):
            item_kind, item_api = _item_defaults(node, kind)
            pending.extend((item, item_kind, item_api or api) for item in reversed(node["items"]))
        else:
            yield _with_defaults(node, kind, api)


def _with_defaults(doc: dict[str, Any], kind: str | None, api: str | None) -> dict[str, Any]:
    if kind and not doc.get("kind"):
        doc["kind"] = kind
    if api and not doc.get("apiVersion"):
        doc["apiVersion"] = api
    return doc


def _is_list(doc: dict[str, Any]) -> bool:
    kind = doc.get("kind")
    listy_kind = kind is None or (isinstance(kind, str) and kind.endswith(_LIST_SUFFIX))
    return listy_kind and isinstance(doc.get("items"), list)


def _item_defaults(doc: dict[str, Any], default_kind: str | None) -> tuple[str | None, str | None]:
    kind = doc.get("kind")
    if not (isinstance(kind, str) and kind != _LIST_SUFFIX and kind.endswith(_LIST_SUFFIX)):
        return default_kind, None  # a generic List says nothing about its items' API group
    api = doc.get("apiVersion")
    return kind[: -len(_LIST_SUFFIX)], api if isinstance(api, str) and api else None


# --- a pretty-printed JSON list, cut into its items without decoding them ---

_ITEMS_OPEN = re.compile(rb'\n( +)"items": \[\n( +)\{\n')
_OPENS_OBJECT = re.compile(rb"\s*\{")


@dataclass(frozen=True)
class JsonListItems:
    """The items of a pretty-printed JSON ``…List``, found by their lines, none decoded.

    ``skeleton`` is the list object with ``items`` empty (decoded: the envelope is checked);
    ``spans`` are the items' ``(start, end)`` byte offsets; ``key_indent`` is the indentation of
    an item's own keys (an item's kind line is ``\n`` + key_indent + ``"kind": …``), one level
    being ``unit`` spaces.
    """

    skeleton: dict[str, Any]
    spans: list[tuple[int, int]]
    key_indent: bytes
    unit: int

    def objects(self, items: list[Any], default_kind: str | None) -> list[dict[str, Any]]:
        """Decoded ``items`` expanded as :func:`expand_lists` expands the whole list."""
        return expand_lists({**self.skeleton, "items": items}, default_kind)


def split_json_list(data: bytes) -> JsonListItems | None:
    """The items of ``data`` when it is one JSON object of the shape serialisers write with an
    indent (kubectl ``-o json``, ``json.dumps(indent=…)``): ``"items": [`` on its own line, each
    item opening with ``{`` and closing with ``}`` alone on a line at one indentation. None for
    any other shape: the caller decodes the whole input. JSON strings hold no raw newline, so a
    line that is only a brace at the items' indentation is structure, never text."""
    opened = _ITEMS_OPEN.search(data)
    if opened is None or not _OPENS_OBJECT.match(data):
        return None
    outer, inner = opened.group(1), opened.group(2)
    last = data.rfind(b"\n" + inner + b"}\n" + outer + b"]")
    if len(inner) <= len(outer) or last < opened.end():
        return None
    separator = b"\n" + inner + b"},\n" + inner + b"{"
    found = re.compile(re.escape(separator)).finditer(data, opened.end(), last)
    starts = [opened.end(2), *(m.end() - 1 for m in found)]
    if data.find(b"\n" + outer + b"]", starts[-1], last) >= 0:
        return None  # the array closed before: not the shape read here
    after = last + len(inner) + len(outer) + 4  # past the items' closing ``]``
    skeleton = _envelope(data[: opened.end(1) + len(b'"items": [')] + b"]" + data[after:])
    if skeleton is None or skeleton.get("items") != [] or not _is_list(skeleton):
        return None
    ends = [start - len(separator) + len(inner) + 3 for start in starts[1:]]
    spans = list(zip(starts, [*ends, last + len(inner) + 2], strict=True))
    unit = len(inner) - len(outer)
    return JsonListItems(skeleton, spans, inner + b" " * unit, unit)


def _envelope(text: bytes) -> dict[str, Any] | None:
    try:
        loaded = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return loaded if isinstance(loaded, dict) else None


# --- `oc get events` text table, as written by must-gather --vm-incident ---

_AGE = re.compile(r"^(?:(\d+)y)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
_AGE_UNITS = (365 * 86400, 86400, 3600, 60, 1)
_REPEAT = re.compile(r"^(?P<age>\S+)\s+\(x(?P<count>\d+) over (?P<over>\S+)\)$")
_HEADER_CELL = re.compile(r"\S+(?: \S+)*")
_OBJECT_KINDS = {
    "pod": "Pod",
    "node": "Node",
    "lease": "Lease",
    "virtualmachine": "VirtualMachine",
    "virtualmachineinstance": "VirtualMachineInstance",
    "virtualmachineinstancemigration": "VirtualMachineInstanceMigration",
    "persistentvolumeclaim": "PersistentVolumeClaim",
    "datavolume": "DataVolume",
}


@dataclass(frozen=True)
class AgeInterval:
    """A displayed age truncated to its smallest unit: the true age is in ``[low_s, high_s)``."""

    low_s: int
    high_s: int


def parse_age(text: str) -> AgeInterval | None:
    """``52m`` → [3120 s, 3180 s); ``3m10s`` → [190 s, 191 s); ``<unknown>`` → None (an age is
    truncated to its displayed unit)."""
    match = _AGE.match(text.strip())
    if not match or not any(match.groups()):
        return None
    seconds, unit = 0, 1
    for value, unit_s in zip(match.groups(), _AGE_UNITS, strict=True):
        if value is not None:
            seconds, unit = seconds + int(value) * unit_s, unit_s
    return AgeInterval(seconds, seconds + unit)


@dataclass(frozen=True)
class TableEvent:
    """One row of an events table. Ages are relative to the (unknown here) collection time."""

    line_no: int
    namespace: str | None
    last_seen: AgeInterval | None
    first_seen: AgeInterval | None
    count: int | None
    type: str
    reason: str
    object_kind: str | None
    object_name: str | None
    message: str
    raw: str
    realigned: bool = False  # columns did not line up with the header; split on runs of spaces


@dataclass
class EventsTable:
    rows: list[TableEvent] = field(default_factory=list)
    errors: list[ManifestError] = field(default_factory=list)


def looks_like_events_table(text: str) -> bool:
    """True when the first non-blank line is an events table header."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    cells = {m.group(0) for m in _HEADER_CELL.finditer(first)}
    return {"LAST SEEN", "REASON", "MESSAGE"} <= cells


def parse_events_table(text: str, path: str = "<events>") -> EventsTable:
    """Split rows by the header's character offsets (messages contain spaces)."""
    table = EventsTable()
    lines = text.split("\n")  # not splitlines(): line numbers must match the file's
    header_at = next((i for i, line in enumerate(lines) if line.strip()), None)
    if header_at is None or not looks_like_events_table(lines[header_at]):
        if header_at is not None and not lines[header_at].startswith("No resources found"):
            table.errors.append(
                ManifestError(path, 1, 1, "no events table header (LAST SEEN … MESSAGE)")
            )
        return table
    columns = [(m.start(), m.group(0)) for m in _HEADER_CELL.finditer(lines[header_at])]
    for index in range(header_at + 1, len(lines)):
        line = lines[index].rstrip("\r")
        if line.strip():
            _add_row(table, columns, line, index + 1, path)
    return table


def _add_row(
    table: EventsTable, columns: list[tuple[int, str]], line: str, line_no: int, path: str
) -> None:
    cells, realigned = _cells(columns, line)
    if not cells.get("REASON") or "LAST SEEN" not in cells:
        table.errors.append(ManifestError(path, line_no, 1, "events table row without a REASON"))
        return
    table.rows.append(_row(cells, line, line_no, realigned))


def _cells(columns: list[tuple[int, str]], line: str) -> tuple[dict[str, str], bool]:
    aligned = all(start == 0 or start > len(line) or line[start - 1] == " " for start, _ in columns)
    if aligned:
        ends = [start for start, _ in columns[1:]] + [len(line)]
        return {
            name: line[start:end].strip() for (start, name), end in zip(columns, ends, strict=True)
        }, False
    parts = re.split(r"\s{2,}", line.strip(), maxsplit=len(columns) - 1)
    return dict(zip([name for _, name in columns], parts, strict=False)), True


def _row(cells: dict[str, str], line: str, line_no: int, realigned: bool) -> TableEvent:
    last_seen, count, first_seen = _ages(cells)
    kind, name = _object(cells)
    return TableEvent(
        line_no=line_no,
        namespace=cells.get("NAMESPACE") or None,
        last_seen=last_seen,
        first_seen=first_seen,
        count=count,
        type=cells.get("TYPE", ""),
        reason=cells.get("REASON", ""),
        object_kind=kind,
        object_name=name,
        message=cells.get("MESSAGE", ""),
        raw=line,
        realigned=realigned,
    )


def _ages(cells: dict[str, str]) -> tuple[AgeInterval | None, int | None, AgeInterval | None]:
    last = cells.get("LAST SEEN", "")
    count = int(cells["COUNT"]) if cells.get("COUNT", "").isdigit() else None
    first = parse_age(cells["FIRST SEEN"]) if cells.get("FIRST SEEN") else None
    repeat = _REPEAT.match(last)
    if repeat:
        return parse_age(repeat["age"]), int(repeat["count"]), parse_age(repeat["over"])
    return parse_age(last), count, first


def _object(cells: dict[str, str]) -> tuple[str | None, str | None]:
    if "OBJECT" in cells and "/" in cells["OBJECT"]:
        kind, _, name = cells["OBJECT"].partition("/")
    else:
        kind, name = cells.get("KIND", ""), cells.get("NAME", "") or cells.get("OBJECT", "")
    kind = kind.split(".", 1)[0]
    return _OBJECT_KINDS.get(kind.lower(), kind) or None, name or None
