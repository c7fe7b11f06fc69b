"""The rule table: every behaviour of virt-controller kvtrace checks, with its source positions.

Positions are KubeVirt v1.9.0 (tag 79d34c17) unless they name another tag. Each rule applies to
the releases v0.53.0–v1.9.x whose code guarantees it (:mod:`kvtrace.model.releases`).
"""

from __future__ import annotations

from kvtrace.model import rules_backoff as bo
from kvtrace.model import rules_leader as ld
from kvtrace.model import rules_migration as mg
from kvtrace.model import rules_phases as ph
from kvtrace.model import rules_pods as po
from kvtrace.model import rules_reconcile as rc
from kvtrace.model import rules_startvmi as sv
from kvtrace.model import rules_strategy as rs
from kvtrace.model import rules_target_cleanup as tc
from kvtrace.model.verdicts import Rule

ENCODED_VERSION = "v1.9.0"

RULES: tuple[Rule, ...] = (
    Rule(
        "KV-RS-01",
        "error",
        "Each run-strategy decision line is printed only for the strategies whose branch prints it.",
        (
            "vm.go:985",
            "vm.go:1005",
            "vm.go:1032",
            "vm.go:1045",
            "vm.go:1052",
            "vm.go:1094",
            "vm.go:1105",
            "vm.go:1134",
            "vm.go:1142",
            "vm.go:1167",
        ),
        rs.decision_text,
        by_construction=True,
    ),
    Rule(
        "KV-RS-02",
        "error",
        "Always and RerunOnFailure stop a VMI only when it is final or a stop/restart was requested.",
        ("vm.go:979-1016", "vm.go:1041-1066"),
        rs.stop_needs_final_or_request,
        by_construction=True,
    ),
    Rule(
        "KV-RS-03",
        "error",
        "RerunOnFailure recreates a VMI after it Failed, never after it Succeeded without a start request.",
        ("vm.go:1052-1063", "vm.go:1067-1081"),
        rs.rerun_after_failure_only,
    ),
    Rule(
        "KV-RS-04",
        "error",
        "Once starts its VMI once and never stops or deletes it (unless the VM is deleted).",
        ("vm.go:1140-1149",),
        rs.once_never_restarts,
    ),
    Rule(
        "KV-RS-06",
        "error",
        "Before v1.2.0, RerunOnFailure stops only a Failed VMI or on a stop request, leaves a "
        "Succeeded one in place, and starts a missing VMI with no start request.",
        ("vm.go:783-820 at v1.0.0",),
        rs.rerun_before_v1_2,
        by_construction=True,
    ),
    Rule(
        "KV-RS-05",
        "error",
        "Halted only stops: a start request first turns the VM into Always, so no VMI is created under Halted.",
        ("vm.go:1115-1139",),
        rs.halted_never_creates,
        by_construction=True,
    ),
    Rule(
        "KV-RC-01",
        "error",
        "The delete of a VMI and the create of its successor never happen in the same reconcile.",
        ("vm.go:1016", "vm.go:1065", "vm.go:1100", "vm.go:3225"),
        rc.delete_and_create_apart,
        by_construction=True,
    ),
    Rule(
        "KV-RC-02",
        "error",
        "A VMI create or delete is decided by a run-strategy line in the same reconcile; decision lines repeat while a VMI terminates and are not deletes.",
        ("vm.go:1005", "vm.go:1341", "vm.go:1658-1688", "vm.go:3236-3249"),
        rc.api_call_follows_decision,
        by_construction=True,
    ),
    Rule(
        "KV-RC-03",
        "error",
        "A VMI incarnation is deleted once: stopVMI does nothing once the VMI has a deletionTimestamp.",
        ("vm.go:1658-1688",),
        rc.one_delete_per_incarnation,
    ),
    Rule(
        "KV-RC-04",
        "warning",
        "A failed reconcile ends in re-enqueuing, retried by the rate limiter (5 ms·2^(n-1) up to 1000 s, max'ed with a 10 qps/100 burst bucket).",
        ("vm.go:336-355", "vm.go:448", "vm.go:348", "vm.go:153-156"),
        rc.failure_ends_in_requeue,
    ),
    Rule(
        "KV-EX-01",
        "error",
        "Expectations prevent a second VMI create before the first create was observed.",
        ("vm.go:1333", "vm.go:2012", "vm.go:3225", "vm.go:1286", "vm.go:1336"),
        rc.no_duplicate_create,
    ),
    Rule(
        "KV-SV-01",
        "error",
        "startVMI names the start revision revision-start-vm-<vm uid>-<generation> and records it in status.virtualMachineRevisionName.",
        ("vm.go:1284-1291", "vm.go:1694-1700", "vm.go:1840-1866"),
        sv.revision_name,
    ),
    Rule(
        "KV-SV-02",
        "error",
        "A created VMI carries the VM-controller finalizer, the foreground-delete finalizer and a controller reference to the VM.",
        ("vm.go:1300", "vm.go:1889-1892", "vmi-mutator.go:128-137"),
        sv.vmi_metadata,
    ),
    Rule(
        "KV-SV-04",
        "error",
        "A created VMI carries the kubevirt.io/vm-generation annotation (written from v1.0.0).",
        ("vm.go:1291", "vm.go:974 at v1.0.0"),
        sv.generation_annotation,
    ),
    Rule(
        "KV-SV-03",
        "error",
        "The VMI firmware UUID is the VM template's, or the legacy uuid5 of the VM name when the template has none.",
        ("vm.go:1933-1948", "firmware.go:83-89"),
        sv.firmware_uuid,
    ),
    Rule(
        "KV-PH-01",
        "error",
        "VMI phases are entered in the order Pending → Scheduling → Scheduled → Running → "
        "Succeeded/Failed (the order of status.phaseTransitionTimestamps, whatever the clocks "
        "stamped), and status.phase never falls behind a phase the VMI entered.",
        ("lifecycle.go:256-613", "controller.go:389-404", "pkg/virt-handler/vm.go:2319-2390"),
        ph.phase_order,
    ),
    Rule(
        "KV-PH-02",
        "error",
        "Each phase gets at most one transition timestamp, and phase Unknown is never set.",
        ("controller.go:389-404", "types.go:1122"),
        ph.phase_bookkeeping,
    ),
    Rule(
        "KV-PH-03",
        "error",
        "The Scheduling → Scheduled hand-over sets the kubevirt.io/nodeName label and status.nodeName to the pod's node.",
        ("lifecycle.go:421-426",),
        ph.handover,
    ),
    Rule(
        "KV-BO-01",
        "error",
        "After n consecutive VMIs end without reaching Running, the next start waits at least 10·n² s (plus up to 50 % jitter, at most 300 s).",
        ("vm.go:1477-1504", "vm.go:1558-1603"),
        bo.start_failure_backoff,
    ),
    Rule(
        "KV-BO-02",
        "error",
        "A start deferred by the backoff ('Waiting N more seconds') does not happen before those N seconds.",
        ("vm.go:1027", "vm.go:1076", "vm.go:1558-1573"),
        bo.backoff_wait_honoured,
    ),
    Rule(
        "KV-MG-01",
        "error",
        "A migration enters its phases once each, in the order Pending → Scheduling → Scheduled "
        "→ PreparingTarget → TargetReady → Running → Succeeded, or ends Failed from any of them.",
        ("migration.go:716-856", "migration.go:528-676", "controller.go:406-421"),
        mg.migration_phase_order,
    ),
    Rule(
        "KV-MG-02",
        "error",
        "A migration has one target pod at a time: the controller creates one only while none "
        "exists for the VMIM.",
        ("migration.go:938-1045", "migration.go:1970-1986"),
        mg.one_target_pod,
    ),
    Rule(
        "KV-MG-03",
        "error",
        "A VMI has at most one migration holding a target pod at a time: the create webhook "
        "refuses a second one in flight, and no target pod is created while the VMI has more "
        "than one active pod.",
        ("migration-create-admitter.go:60-148", "migration.go:1354-1357", "migration.go:476-508"),
        mg.one_active_migration,
    ),
    Rule(
        "KV-MG-04",
        "error",
        "A VMI leaves the node of its launcher pod only by a migration that completed to the new "
        "node.",
        ("migration-target.go:289-317", "migration.go:846-853"),
        mg.node_change_needs_migration,
    ),
    Rule(
        "KV-MG-05",
        "info",
        "A finished migration whose VMI now holds another migration's state keeps failing its "
        "'mark failed' patch on every VMI update: the patch tests a migrationUid the VMI no "
        "longer holds.",
        ("migration.go:1114-1148", "migration.go:1909-1919", "migration.go:2363-2394"),
        mg.stale_mark_failed,
    ),
    Rule(
        "KV-MG-06",
        "error",
        "A failed attempt's target pod is cleaned up: a target pod still Pending past its "
        "pending timeout is deleted in the reconcile that finds it so (then the migration "
        "fails); a failed migration's started target pod is stopped on its node and deleted "
        "with the migration when finalized migrations past 5 per VMI are garbage-collected.",
        (
            "migration.go:1717-1756",
            "migration.go:1530-1547",
            "migration.go:1156-1173",
            "migration.go:2251-2315",
        ),
        tc.target_pod_cleanup,
    ),
    Rule(
        "KV-EV-01",
        "error",
        "A drain migrates a VMI only when its eviction strategy (the VMI's, else the cluster's) "
        "is LiveMigrate, or LiveMigrateIfPossible on a migratable VMI.",
        ("migrations.go:116-138", "evacuation.go:438-477"),
        mg.evacuation_only_when_allowed,
    ),
    Rule(
        "KV-LD-01",
        "error",
        "Only the replica holding the virt-controller Lease runs the controllers.",
        ("application.go:604", "application.go:614", "leaderelection.go:257-271"),
        ld.leader_only,
    ),
    Rule(
        "KV-LD-02",
        "error",
        "A replica never acts after another replica acquired the lease from it: that is split brain (a deposed leader acting on a stale view).",
        ("leaderelectionconfig/config.go:30-44", "application.go:1170-1172"),
        ld.no_split_brain,
    ),
    Rule(
        "KV-PO-01",
        "error",
        "A VMI has one launcher pod of its own at a time: the VMI controller creates one only "
        "when none exists and its pod expectations are met.",
        ("vmi.go:334-338", "lifecycle.go:1077"),
        po.one_launcher_pod,
    ),
)

RULES_BY_ID = {rule.id: rule for rule in RULES}
