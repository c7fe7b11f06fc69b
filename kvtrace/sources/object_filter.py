"""Read only the objects one VM's timeline can use: a byte scan of each item of a JSON list
before any decode (issue 16: ``timeline --bundle`` loaded 20,000 VMs' objects for one VM).

An item is decoded when its bytes hold a needle: the VM's name (its VMs, VMIs, launcher pods'
``kubevirt.io/domain``, VMIMs' ``vmiName``, Events naming them), a uid of a VM, VMI, pod or
VMIM decoded so far (owner references, ``kubevirt.io/created-by``, start revisions, Events'
``involvedObject.uid``), a pod's or VMIM's name (Events naming them), or ``virt-controller``.
Conservative everywhere else: a file of any other kind, an item whose own ``kind`` or
``metadata.name`` line cannot be seen (it would be a skip), a name or uid with characters JSON
may escape, or a shape not recognised: all decoded as without the filter.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import orjson

from kvtrace.evidence import EVENT, POD, REVISION, VM, VMI, VMIM
from parsers.manifests import JsonListItems, split_json_list

FILTERED_KINDS = frozenset({VM, VMI, POD, REVISION, EVENT, VMIM})
_HARVESTED = frozenset({VM, VMI, POD, VMIM})  # kinds whose uid other objects link to
_NAMED = frozenset({POD, VMIM})  # kinds Events may name with another name than the VM's
# For a list of one kind: the kinds whose uids its objects link to (the name always counts).
IMAGES = "image"  # pods whose image tag may name the release, when nothing else does
_LINKS = {
    VM: (),
    VMIM: (),
    VMI: (VM,),
    REVISION: (VM,),
    POD: (VMI, IMAGES),
    EVENT: (VM, VMI, POD, VMIM),
}
_PLAIN = re.compile(r"^[A-Za-z0-9._-]+$")  # written as is in JSON: a byte scan finds it
ALWAYS = b"virt-controller"  # the controller pods: leader, version, lease holder


@dataclass
class FilteredFile:
    """One list read through the filter: which items were decoded, with what needles."""

    relative: str
    default_kind: str | None
    from_list: bool
    kind: str | None = None  # the one kind of every item, once seen
    decoded: set[int] = field(default_factory=set)
    needles_seen: int = 0


@dataclass
class Selection:
    """The objects decoded from one list, and how many the list holds in all."""

    objects: list[dict[str, Any]]
    count: int


class ObjectFilter:
    """Needles for one VM, grown from what is decoded; see the module docstring."""

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name
        # (needle, the kind of the object it came from; None: the VM's name, always searched)
        self.needles: list[tuple[bytes, str | None]] = [(name.encode(), None), (ALWAYS, None)]
        self.files: list[FilteredFile] = []
        # a value a byte scan may miss (JSON may escape it) was met: decode everything
        self.given_up = False

    @classmethod
    def for_vm(cls, namespace: str, name: str) -> ObjectFilter | None:
        return cls(namespace, name) if _PLAIN.match(name) else None

    def select(self, data: bytes, record: FilteredFile) -> Selection | None:
        """The items of ``data`` that may belong to the VM, or None: decode it all."""
        if self.given_up:
            return None
        items = split_json_list(data)
        record.kind = _one_kind(data, items, record.default_kind) if items is not None else None
        if items is None or record.kind is None or not _named(data, items):
            return None
        decoded = self._decode(data, items, record)
        if decoded is None:
            return None
        self.files.append(record)
        objects = items.objects([decoded[i] for i in sorted(decoded)], record.default_kind)
        return Selection(objects, len(objects) + len(items.spans) - len(decoded))

    def reselect(self, data: bytes, record: FilteredFile) -> list[dict[str, Any]] | None:
        """The items of a file read before that match needles found since; None: decode all."""
        if self.given_up:
            return None
        items = split_json_list(data)
        decoded = self._decode(data, items, record) if items is not None else None
        if items is None or decoded is None:
            return None
        return items.objects([decoded[i] for i in sorted(decoded)], record.default_kind)

    def _decode(
        self, data: bytes, items: JsonListItems, record: FilteredFile
    ) -> dict[int, Any] | None:
        """Decode the matching items, harvesting needles, until no new needle matches."""
        decoded: dict[int, Any] = {}
        while True:
            wanted = self._matching(data, items, record.needles_seen, record.kind)
            wanted -= record.decoded
            record.needles_seen = len(self.needles)
            if not wanted:
                return decoded
            for index in sorted(wanted):
                start, end = items.spans[index]
                try:
                    decoded[index] = orjson.loads(data[start:end])
                except orjson.JSONDecodeError:
                    return None
                record.decoded.add(index)
                if not self._harvest(decoded[index]):
                    return None

    def _matching(
        self, data: bytes, items: JsonListItems, since: int, record_kind: str | None
    ) -> set[int]:
        starts = [start for start, _ in items.spans]
        found: set[int] = set()
        links = _LINKS.get(record_kind or "", ())
        for needle, source in self.needles[since:]:
            if source is not None and source not in links:
                continue
            at = data.find(needle)
            while at >= 0:
                index = _item_at(starts, at)
                found.add(index)
                at = data.find(needle, max(at + 1, items.spans[index][1]))
        return found

    def _harvest(self, body: Any) -> bool:
        """Add the needles ``body`` gives; False when one cannot be found by a byte scan."""
        if not isinstance(body, dict) or body.get("kind") not in _HARVESTED:
            return True
        meta = body.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        if not self._may_be_in_scope(str(body["kind"]), meta):
            return True
        kind = str(body["kind"])
        values = [meta.get("uid")]
        if kind in _NAMED:
            values.append(meta.get("name"))
        for value in values:
            if not value:
                continue
            if not isinstance(value, str) or not _PLAIN.match(value):
                self.given_up = True
                return False
            needle = (value.encode(), kind)
            always = (n for n, source in self.needles if source is None)
            if needle not in self.needles and not any(n in needle[0] for n in always):
                self.needles.append(needle)
        return True

    def _may_be_in_scope(self, kind: str, meta: dict[str, Any]) -> bool:
        """False only for what no scope of the VM holds (kvtrace.timeline.vmscope): a VM of
        another key, a pod that is not a launcher (the virt-controller pods)."""
        if kind == VM:  # as kvtrace.sources.objects reads the key
            namespace = str(meta["namespace"]) if meta.get("namespace") else None
            return (namespace, meta.get("name")) == (self.namespace, self.name)
        if kind == POD:
            labels = meta.get("labels")
            role = labels.get("kubevirt.io") if isinstance(labels, dict) else None
            return role in (None, "virt-launcher")
        return True

    def search_images(self) -> None:
        """Decode the launcher pods too: the release is then read from an image tag
        (``kvtrace.model.version``), from the first pod in the evidence's order."""
        if (b"virt-launcher", IMAGES) not in self.needles:
            self.needles.append((b"virt-launcher", IMAGES))

    def stale(self) -> list[FilteredFile]:
        """Files read before needles they may hold were known (or before the filter gave up):
        read again."""
        return [f for f in self.files if f.needles_seen < len(self.needles) or self.given_up]


def _item_at(starts: list[int], at: int) -> int:
    return max(0, bisect_right(starts, at) - 1)


def _one_kind(data: bytes, items: JsonListItems, expected: str | None) -> str | None:
    """The kind every item states on its own line, when it is one filtered kind; else None."""
    line = b"\n" + items.key_indent + b'"kind": "'
    if expected in FILTERED_KINDS and data.count(line + str(expected).encode() + b'"') == len(
        items.spans
    ):
        return expected
    kinds = set(re.findall(re.escape(line) + rb'([^"\\]*)"', data))
    if len(kinds) != 1 or data.count(line) != len(items.spans):
        return None
    kind = kinds.pop().decode()
    return kind if kind in FILTERED_KINDS else None


def _named(data: bytes, items: JsonListItems) -> bool:
    """Every item has a non-empty ``metadata.name`` line, so none left undecoded would have
    been a skip ("… without metadata.name")."""
    key = re.escape(items.key_indent)
    child = re.escape(items.key_indent + b" " * items.unit)
    metadata_name = b"\n" + key + rb'"metadata": \{\n(?:' + key + rb" [^\n]*\n)*?" + child
    named = re.findall(metadata_name + rb'"name": "[^"]', data)
    return len(named) == len(items.spans)
