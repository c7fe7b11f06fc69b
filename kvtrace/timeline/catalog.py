"""The virt-controller message catalog: which log line means what.

Messages are matched by their text and the file in ``pos``, never by ``pos`` alone: the same
message moves between releases (``Starting VM due to runStrategy`` is vm.go:1009 at v1.7.0, 1030
at v1.7.1, 1031 at v1.7.3–v1.8.4 and 1032 at v1.9.0). Each entry records where v1.7.0 … v1.9.0
print it, so a line's ``pos`` can also tell which release wrote it.

Categories:
``decision`` a run-strategy decision (logged before acting, repeats while a VMI terminates);
``api`` a VMI create/delete API call that succeeded; ``failure`` a failed call or reconcile;
``requeue`` a reconcile that ended in error (the key is inside the message); ``backoff`` a start
deferred by the crash-loop backoff; ``leader`` leader election; ``controller`` controller
lifecycle; ``node`` the node controller failing a VMI of an unresponsive node; ``pool`` a
VirtualMachinePool replacing an outdated VMI; ``info`` anything else about the VM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from parsers.logfmt import ERA_FLAG
from parsers.records import LogRecord

# Version bands used for positions: vm.go line numbers are shared by v1.7.1–v1.7.2 and by
# v1.7.3–v1.8.4.
V170, V171, V173, V190 = "v1.7.0", "v1.7.1", "v1.7.3", "v1.9.0"


@dataclass(frozen=True)
class Message:
    """One message template of virt-controller (or client-go) and what it means."""

    id: str
    category: str
    pattern: re.Pattern[str]
    summary: str
    positions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def pos_at(self, version: str = V190) -> tuple[str, ...]:
        return self.positions.get(version, ())

    @property
    def files(self) -> frozenset[str]:
        """The source files that print this message, in any known release."""
        return frozenset(p.split(":", 1)[0] for where in self.positions.values() for p in where)


def _m(id_: str, category: str, regex: str, summary: str, **positions: tuple[str, ...]) -> Message:
    bands = {V170: "v170", V171: "v171", V173: "v173", V190: "v190"}
    pos = {band: positions[key] for band, key in bands.items() if key in positions}
    return Message(id_, category, re.compile(regex), summary, pos)


_PHASE = r"(?P<phase>\S*)"
_RS = r"(?P<strategy>\S+)"
_KEY = r"(?P<key>\S+)"

CATALOG: tuple[Message, ...] = (
    _m(
        "vm.restart-request",
        "decision",
        rf"^processing forced restart request for VMI with phase {_PHASE} "
        rf"and VM runStrategy: {_RS}$",
        "restart requested: VMI will be stopped",
        v170=("vm.go:962",),
        v171=("vm.go:983",),
        v173=("vm.go:984",),
        v190=("vm.go:985",),
    ),
    _m(
        "vm.stop",
        "decision",
        rf"^Stopping VM with VMI in phase {_PHASE} and VM runStrategy: {_RS}$",
        "decision: stop the VMI",
        v170=("vm.go:982", "vm.go:1029"),
        v171=("vm.go:1003", "vm.go:1050"),
        v173=("vm.go:1004", "vm.go:1051"),
        v190=("vm.go:1005", "vm.go:1052"),
    ),
    _m(
        "vm.stop-request",
        "decision",
        rf"^processing stop request for VMI with phase {_PHASE} and VM runStrategy: {_RS}$",
        "stop requested",
        v170=("vm.go:1022",),
        v171=("vm.go:1043",),
        v173=("vm.go:1044",),
        v190=("vm.go:1045",),
    ),
    # Argument-order quirk at vm.go:1094: the phase and the constant "Stopping VM" are swapped.
    _m(
        "vm.stop-manual",
        "decision",
        rf"^{_PHASE} with VMI in phase Stopping VM due to stop request and VM runStrategy: {_RS}$",
        "decision: stop the VMI (stop request)",
        v170=("vm.go:1071",),
        v171=("vm.go:1092",),
        v173=("vm.go:1093",),
        v190=("vm.go:1094",),
    ),
    _m(
        "vm.stop-halted",
        "decision",
        rf"^Stopping VM with VMI in phase {_PHASE} due to runStrategy: {_RS}$",
        "decision: stop the VMI (Halted)",
        v170=("vm.go:1111",),
        v171=("vm.go:1132",),
        v173=("vm.go:1133",),
        v190=("vm.go:1134",),
    ),
    _m(
        "vm.backoff",
        "backoff",
        rf"^Delaying start of VM Starting VM with 'runStrategy: {_RS}' due to start failure "
        r"backoff\. Waiting (?P<seconds>-?\d+) more seconds before starting\.$",
        "start deferred by the crash-loop backoff",
        v170=("vm.go:1004", "vm.go:1053"),
        v171=("vm.go:1025", "vm.go:1074"),
        v173=("vm.go:1026", "vm.go:1075"),
        v190=("vm.go:1027", "vm.go:1076"),
    ),
    _m(
        "vm.start",
        "decision",
        rf"^Starting VM due to runStrategy: {_RS}$",
        "decision: create a VMI",
        v170=("vm.go:1009", "vm.go:1058"),
        v171=("vm.go:1030", "vm.go:1079"),
        v173=("vm.go:1031", "vm.go:1080"),
        v190=("vm.go:1032", "vm.go:1081"),
    ),
    _m(
        "vm.start-request",
        "decision",
        rf"^Starting VM due to start request and runStrategy: {_RS}$",
        "decision: create a VMI (start request)",
        v170=("vm.go:1082", "vm.go:1119"),
        v171=("vm.go:1103", "vm.go:1140"),
        v173=("vm.go:1104", "vm.go:1141"),
        v190=("vm.go:1105", "vm.go:1142"),
    ),
    _m(
        "vm.start-receiver",
        "decision",
        rf"^Starting VM as receiver due to runStrategy: {_RS}$",
        "decision: create a receiver VMI",
        v170=("vm.go:1144",),
        v171=("vm.go:1165",),
        v173=("vm.go:1166",),
        v190=("vm.go:1167",),
    ),
    _m(
        "vm.created",
        "api",
        r"^Started VM by creating the new virtual machine instance (?P<vmi>\S+)$",
        "VMI create call succeeded",
        v170=("vm.go:1318",),
        v171=("vm.go:1339",),
        v173=("vm.go:1340",),
        v190=("vm.go:1341",),
    ),
    _m(
        "vm.create-failed",
        "failure",
        r"^Failed to create VirtualMachineInstance: (?P<vmi>.*)$",
        "VMI create call failed",
        v170=("vm.go:1313",),
        v171=("vm.go:1334",),
        v173=("vm.go:1335",),
        v190=("vm.go:1336",),
    ),
    _m(
        "vm.deleted",
        "api",
        rf"^Dispatching delete event for vmi {_KEY} with phase {_PHASE}$",
        "VMI delete call succeeded",
        v170=("vm.go:1662",),
        v171=("vm.go:1683",),
        v173=("vm.go:1684",),
        v190=("vm.go:1685",),
    ),
    _m(
        "vm.delete-failed",
        "failure",
        r"^Failure attempting to delete VMI: (?P<error>.*)$",
        "VMI delete call failed",
        v190=("vm.go:1013", "vm.go:1055", "vm.go:1097", "vm.go:3245"),
    ),
    _m(
        "vm.revision-failed",
        "failure",
        r"^Failed to create controller revision for VirtualMachine\.$",
        "ControllerRevision create failed",
        v170=("vm.go:1263",),
        v171=("vm.go:1284",),
        v173=("vm.go:1285",),
        v190=("vm.go:1286",),
    ),
    _m(
        "vm.reconcile-failed",
        "failure",
        r"^Reconciling the VirtualMachine failed\.$",
        "reconcile returned a sync error",
        v170=("vm.go:446",),
        v171=("vm.go:446",),
        v173=("vm.go:447",),
        v190=("vm.go:448",),
    ),
    _m(
        "vm.status-failed",
        "failure",
        r"^Updating the VirtualMachine status failed\.$",
        "VM status update failed",
        v170=("vm.go:451",),
        v171=("vm.go:451",),
        v173=("vm.go:452",),
        v190=("vm.go:453",),
    ),
    _m(
        "vm.requeue",
        "requeue",
        rf"^re-enqueuing VirtualMachine {_KEY}$",
        "VM reconcile ended in error; retried with backoff",
        v170=("vm.go:346",),
        v171=("vm.go:346",),
        v173=("vm.go:347",),
        v190=("vm.go:348",),
    ),
    _m(
        "vm.processed",
        "info",
        rf"^processed VirtualMachine {_KEY}$",
        "VM reconcile succeeded (V4)",
        v170=("vm.go:349",),
        v171=("vm.go:349",),
        v173=("vm.go:350",),
        v190=("vm.go:351",),
    ),
    _m(
        "vm.processing",
        "info",
        r"^Started processing vm$",
        "VM reconcile started (V4)",
        v170=("vm.go:370",),
        v171=("vm.go:370",),
        v173=("vm.go:371",),
        v190=("vm.go:372",),
    ),
    _m(
        "vm.decentralized-halt",
        "decision",
        r"^decentralized migration completed, setting runStrategy to halted$",
        "runStrategy set to Halted after a decentralized migration",
        v190=("vm.go:990",),
    ),
    _m(
        "vm.receiver-setup",
        "info",
        r"^Setting up receiver VMI (?P<key>\S+/\S+)$",
        "receiver VMI annotation added",
        v170=("vm.go:1271",),
        v171=("vm.go:1292",),
        v173=("vm.go:1293",),
        v190=("vm.go:1294",),
    ),
    _m(
        "vm.manual-recovery",
        "failure",
        r"^cannot start the VM since it has the manual recovery required condtion set$",
        "start blocked by ManualRecoveryRequired",
        v190=("vm.go:1269",),
    ),
    _m(
        "vmi.requeue",
        "requeue",
        rf"^reenqueuing VirtualMachineInstance {_KEY}$",
        "VMI reconcile ended in error; retried with backoff",
        v170=("vmi.go:269",),
        v171=("vmi.go:278",),
        v173=("vmi.go:296",),
        v190=("vmi.go:288",),
    ),
    _m(
        "vmi.processed",
        "info",
        rf"^processed VirtualMachineInstance {_KEY}$",
        "VMI reconcile succeeded (V4)",
        v170=("vmi.go:272",),
        v171=("vmi.go:281",),
        v173=("vmi.go:299",),
        v190=("vmi.go:291",),
    ),
    _m(
        "vmi.backend-storage",
        "info",
        r"^Delaying pod creation while backend storage populates\.$",
        "pod creation waits for backend storage",
        v190=("lifecycle.go:139",),
    ),
    _m(
        "vmi.waiting-for-sync",
        "info",
        r"^setting VMI to WaitingForSync while .*$",
        "VMI moved to WaitingForSync",
        v190=("lifecycle.go:444", "lifecycle.go:452", "lifecycle.go:519"),
    ),
    _m(
        "vmi.wfs-delete",
        "info",
        r"^deleting VMI while waiting for sync, removing finalizers$",
        "WaitingForSync VMI deleted",
        v190=("lifecycle.go:539",),
    ),
    _m(
        "vmi.overhead-annotation",
        "failure",
        r"^Failed to parse memory overhead annotation: .*$",
        "bad memory-overhead annotation",
        v190=("lifecycle.go:1175",),
    ),
    _m(
        "pod.conditions-failed",
        "failure",
        r"^Patching of pod conditions failed: .*$",
        "pod condition patch failed",
        v190=("lifecycle.go:972",),
    ),
    _m(
        "vm.hotplug",
        "info",
        r"^hotplugging (?:cpu|memory) to .*$",
        "CPU/memory hotplug patch",
        v190=("vm.go:616", "vm.go:3563"),
    ),
    # The VM controller's expectations (pkg/controller/expectations.go at v1.9.0), verbosity 4
    # but for the clobbered delete keys: the VM key is in the text or in the printed struct.
    _m(
        "vm.expectations-unrecorded",
        "info",
        r"^Controller (?P<key>\S+) \(name: [^)]*\) either never recorded expectations, or the "
        r"ttl expired\.$",
        "no pending expectation for the VM (never set, or older than five minutes)",
        v190=("expectations.go:140",),
    ),
    _m(
        "vm.expectations-state",
        "info",
        r"^(?:Controller expectations \(name: [^)]*\) (?:fulfilled|expired) |Controller \(name: "
        r'[^)]*\) still waiting on expectations |Setting expectations ).*key:"(?P<key>[^"]+)".*$',
        "the VM's create/delete expectation was set, met, or is still pending",
        v190=(
            "expectations.go:123",
            "expectations.go:126",
            "expectations.go:129",
            "expectations.go:165",
        ),
    ),
    _m(
        "vm.expectations-deletions",
        "info",
        r"^Controller (?P<key>\S+) (?:waiting on deletions for: .*|received delete for pod "
        r"(?P<vmi>\S+))$",
        "the VM controller expects, or has seen, the delete of its VMI",
        v190=("expectations.go:314", "expectations.go:330", "expectations.go:344"),
    ),
    _m(
        "vm.expectations-clobbered",
        "failure",
        r"^Clobbering existing delete keys: .*key:(?P<key>[^ }]+).*$",
        "a delete expectation was replaced while one was pending",
        v190=("expectations.go:308",),
    ),
    _m(
        "controller.vm-start",
        "leader",
        r"^Starting VirtualMachine controller\.$",
        "VM controller started on this replica",
        v170=("vm.go:309",),
        v171=("vm.go:309",),
        v173=("vm.go:310",),
        v190=("vm.go:311",),
    ),
    _m(
        "controller.vmi-start",
        "leader",
        r"^Starting vmi controller\.$",
        "VMI controller started on this replica",
        v170=("vmi.go:227",),
        v171=("vmi.go:236",),
        v173=("vmi.go:254",),
        v190=("vmi.go:246",),
    ),
    _m(
        "leader.controllers",
        "leader",
        r"^STARTING controllers with following threads : .*$",
        "this replica started leading (controllers started)",
        v190=("stdlib.go:105",),
    ),
    _m(
        "leader.attempt",
        "leader",
        r"^attempting to acquire leader lease (?P<lock>\S+?)\.\.\.$",
        "waiting for the lease",
        v190=("leaderelection.go:257",),
    ),
    _m(
        "leader.acquired",
        "leader",
        r"^successfully acquired lease (?P<lock>\S+)$",
        "acquired the lease",
        v190=("leaderelection.go:271",),
    ),
    _m(
        "migration.handed-off",
        "migration",
        r"^Handed off migration (?P<migration>\S+/\S+) to target virt-handler\.$",
        "the migration controller handed the migration to the target virt-handler",
        v190=("migration.go:1290",),
    ),
    _m(
        "migration.reported-failed",
        "failure",
        r"^VMI (?P<vmi>\S+/\S+) reported migration failed$",
        "the source virt-handler reported the migration failed",
        v190=("migration.go:630",),
    ),
    _m(
        "migration.mark-failed-patch",
        "failure",
        r"^Failed to patch VMI status to indicate migration (?P<migration>\S+/\S+) failed\.$",
        "the patch marking a migration failed on the VMI was refused",
        v190=("migration.go:1146",),
    ),
    _m(
        "migration.marked-failed",
        "migration",
        r"^Marked Migration (?P<migration>\S+/\S+) failed on vmi due to target pod disappearing "
        r"before migration kicked off\.$",
        "the migration controller marked the migration failed on the VMI: its target pod is gone",
        v190=("migration.go:1150",),
    ),
    _m(
        "migration.target-unschedulable",
        "migration",
        r"^Migration target pod for VMI \[(?P<vmi>\S+/\S+)\] is currently unschedulable\.$",
        "the migration controller found the target pod unschedulable (it is deleted once past "
        "its pending timeout)",
        v190=("migration.go:1740",),
    ),
    _m(
        "migration.target-deleted",
        "migration",
        r"^Deleted pending migration target pod with uuid (?P<pod_uid>\S+) for migration "
        r"(?P<migration>\S+) with uuid (?P<migration_uid>\S+) with reason \[(?P<reason>.*)\]$",
        "the migration controller deleted the target pod (pending timeout, or the migration "
        "was cancelled)",
        v190=("migration.go:1170", "migration.go:1544"),
    ),
    _m(
        "workload.migrate",
        "migration",
        r"^Initiated migration of vmi as part of workload update$",
        "the workload updater created a migration to move the VMI off an outdated virt-launcher",
        v190=("workload-updater.go:596",),
    ),
    _m(
        "workload.migrate-failed",
        "failure",
        r"^Failed to migrate vmi as part of workload update$",
        "the workload updater could not create the migration of an outdated VMI",
        v190=("workload-updater.go:590",),
    ),
    _m(
        "workload.evict",
        "workload",
        r"^Evicted vmi pod as part of workload update$",
        "the workload updater evicted the pod of a VMI on an outdated virt-launcher",
        v190=("workload-updater.go:628",),
    ),
    _m(
        "workload.evict-failed",
        "failure",
        r"^Failed to evict vmi as part of workload update$",
        "the eviction was refused (a LiveMigrate VMI is marked and migrated instead) or failed",
        v190=("workload-updater.go:624",),
    ),
    _m(
        "node.unresponsive",
        "node",
        r"^Moving vmi (?P<vmi>\S+) in namespace (?P<namespace>\S+) on unresponsive node to "
        r"failed state$",
        "the node controller failed the VMI of a node whose virt-handler stopped heartbeating",
        v170=("node.go:278",),
        v171=("node.go:278",),
        v173=("node.go:278",),
        v190=("node.go:278",),
    ),
    _m(
        "pool.outdated-vmi",
        "pool",
        r"^Proactive update of VM (?P<key>\S+/\S+) by deleting outdated VMI$",
        "a VirtualMachinePool deleted the VMI of an outdated VM to update it",
        v170=("pool.go:1655",),
        v171=("pool.go:1655",),
        v173=("pool.go:1655",),
        v190=("pool.go:1636",),
    ),
    _m(
        "leader.renew-failed",
        "leader",
        r"^failed to renew lease (?P<lock>\S+?): .*$",
        "failed to renew the lease",
        v190=("leaderelection.go:297",),
    ),
    _m(
        "leader.lost",
        "leader",
        r"^leaderelection lost$",
        "lost the lease; the process exits",
        v190=("stdlib.go:105",),
    ),
)

# Prefix index: the first word of a message narrows the candidate templates.
_BY_FIRST_WORD: dict[str, list[Message]] = {}
for _msg in CATALOG:
    _first = _msg.pattern.pattern.lstrip("^").split(" ", 1)[0]
    _BY_FIRST_WORD.setdefault(_first if _first.isalpha() else "", []).append(_msg)


# KubeVirt before v0.6 (2018) logged logfmt, and its VM kind was ``OfflineVirtualMachine``
# (its ``VirtualMachine`` was today's VMI). No release of that era is catalogued or modelled: its
# lines about a VM are shown in the VM's timeline and judged by no rule.
PRE_V1_VM = Message(
    "vm.pre-v1",
    "info",
    re.compile(r".*", re.S),
    "a 2018-era (logfmt) line about an OfflineVirtualMachine: shown, not judged",
)


def match_record(record: LogRecord) -> tuple[Message, dict[str, str]] | None:
    """:func:`match` for a parsed line; a 2018-era line about an OfflineVirtualMachine that
    matches nothing is :data:`PRE_V1_VM`."""
    found = _match_at(record.msg, record.pos)
    if found is None and ERA_FLAG in record.flags and record.kind == "OfflineVirtualMachine":
        return PRE_V1_VM, {}
    return found


def match(text: str, pos: str | None = None) -> tuple[Message, dict[str, str]] | None:
    """The catalog entry a message matches, with its captured arguments. A call site is its
    text and its file together: the same text printed from another file is another message
    (the VMI controller's ``reenqueuing`` text also comes from disruptionbudget.go)."""
    return _match(text, pos.split(":", 1)[0] if pos else None)


@lru_cache(maxsize=4096)
def _match_at(text: str, pos: str | None) -> tuple[Message, dict[str, str]] | None:
    """:func:`match`, cached by the whole ``pos`` (every parsed line asks)."""
    return match(text, pos)


@lru_cache(maxsize=4096)
def _match(text: str, file: str | None) -> tuple[Message, dict[str, str]] | None:
    first = text.split(" ", 1)[0]
    for entry in (*_BY_FIRST_WORD.get(first, ()), *_BY_FIRST_WORD.get("", ())):
        if file is not None and entry.positions and file not in _files(entry):
            continue
        found = entry.pattern.match(text)
        if found:
            return entry, {k: v for k, v in found.groupdict().items() if v is not None}
    return None


_FILES: dict[str, frozenset[str]] = {}


def _files(entry: Message) -> frozenset[str]:
    """The files that print ``entry`` in any release of the call-site catalog: its own, and the
    ones its call sites moved from (:meth:`~kvtrace.timeline.callsites.Catalog.lineage`)."""
    found = _FILES.get(entry.id)
    if found is None:
        from kvtrace.timeline.callsites import catalog

        known, files = catalog(), set(entry.files)
        for pos in entry.pos_at(V190):
            file, _, line = pos.rpartition(":")
            if line.isdigit():
                files |= {site.file for site in known.lineage(file, int(line))}
        found = _FILES[entry.id] = frozenset(files)
    return found


def names_vm(message_id: str | None) -> bool:
    """Whether a line with this catalog id is about a VM: a VM-controller message, or the VMI
    controller's requeue of the VMI that carries the VM's name."""
    if message_id is None:
        return False
    return message_id.startswith("vm.") or message_id == "vmi.requeue"


def versions_for_pos(entry: Message, pos: str) -> list[str]:
    """Which release bands print ``entry`` at ``pos`` (empty when none of the known ones)."""
    return [band for band, where in entry.positions.items() if pos in where]
