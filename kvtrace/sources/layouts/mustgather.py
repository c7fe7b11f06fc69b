"""KubeVirt must-gather roots (a ``version`` file whose first line is ``kubevirt/must-gather``)
and plain ``oc adm inspect`` trees."""

from __future__ import annotations

from kvtrace.evidence import LEASE, VM, VMI, Evidence
from kvtrace.sources.builder import EvidenceBuilder, collection_window
from kvtrace.sources.layouts.inspect import read_inspect_root
from kvtrace.sources.walk import BundleTree

MARKER = "kubevirt/must-gather"
MAX_DEPTH = 4

NO_LEASE = (
    "must-gather never collects the virt-controller Lease: leader history comes only from "
    "logs and LeaderElection Events"
)
MUST_GATHER_GAPS = (
    "Events older than about 1 h before collection are gone (apiserver --event-ttl)",
    "logs exist only for pods that were Running and Ready at collection; previous.log holds only "
    "the last terminated instance",
    "launcher Pod YAML is collected only for Running pods",
)
NO_CONTROLLER_LOGS = (
    "no virt-controller logs in this bundle: the pods were not Running and Ready at collection, "
    "or the install namespace was not gathered"
)


def _depth(relative: str) -> int:
    return relative.count("/")


def _parent(relative: str) -> str:
    return relative.rsplit("/", 1)[0] if "/" in relative else ""


def _first_line(tree: BundleTree, relative: str) -> str:
    try:
        with (tree.root / relative).open("rb") as handle:
            head = handle.read(256)
    except OSError:
        return ""
    return head.decode("utf-8", errors="replace").splitlines()[0].strip() if head else ""


def find_roots(tree: BundleTree) -> list[str]:
    """Directories (depth ≤ 4) holding a ``version`` file whose first line is the marker."""
    return [
        _parent(relative)
        for relative in tree.files
        if relative.rsplit("/", 1)[-1] == "version"
        and _depth(relative) <= MAX_DEPTH
        and _first_line(tree, relative) == MARKER
    ]


def find_inspect_roots(tree: BundleTree) -> list[str]:
    """Prefixes above ``namespaces/<ns>/core/pods.yaml`` or ``namespaces/<ns>/pods/<pod>/``."""
    roots: set[str] = set()
    for relative in tree.files:
        parts = relative.split("/")
        for at, part in enumerate(parts):
            tail = parts[at:]
            if part == "namespaces" and (
                tail[2:4] == ["core", "pods.yaml"] or (len(tail) > 4 and tail[2] == "pods")
            ):
                roots.add("/".join(parts[:at]))
                break
    return sorted(roots)


def read_must_gather(builder: EvidenceBuilder, roots: list[str]) -> Evidence:
    """Every root read with the inspect rules; objects de-duplicated across roots."""
    windows = [w for root in roots if (w := collection_window(builder, root)) is not None]
    builder.capture_started = min((start for start, _ in windows), default=None)
    builder.captured_at = max((end for _, end in windows), default=None)
    for root in roots:
        read_inspect_root(builder, root)
    if not builder.index.by_kind().get(LEASE):
        builder.missing.append(NO_LEASE)
    builder.missing.extend(MUST_GATHER_GAPS)
    note_missing_controller_logs(builder)
    return builder.build("must-gather", "full")


def read_inspect(builder: EvidenceBuilder, roots: list[str]) -> Evidence:
    """A plain ``oc adm inspect`` tree: the same rules, no KubeVirt collectors guaranteed."""
    for root in roots:
        read_inspect_root(builder, root)
    builder.missing.append("oc adm inspect does not collect the virt-controller Lease")
    builder.missing.append(MUST_GATHER_GAPS[0])
    note_missing_controller_logs(builder)
    has_vms = any(builder.index.by_kind().get(kind) for kind in (VM, VMI))
    if not has_vms:
        builder.missing.append("no VirtualMachine or VirtualMachineInstance objects in this tree")
    return builder.build("inspect", "full" if has_vms else "low")


def note_missing_controller_logs(builder: EvidenceBuilder) -> None:
    if not any(log.info.container == "virt-controller" for log in builder.logs):
        builder.missing.append(NO_CONTROLLER_LOGS)
