"""Which log lines reach a VM's timeline (kvtrace/timeline/log_rows.py ``attribute``): by the
object a line is logged with, and — for the other controllers' lines, which often carry another
object or none — by the VM or VMI named in the text. Messages are v1.9.0's formats."""

from __future__ import annotations

import pytest

from kvtrace.timeline.log_rows import attribute
from kvtrace.timeline.vmscope import VMScope
from parsers.records import LogRecord

SCOPE = VMScope("prod", "web", None)


def _record(msg: str, namespace: str | None = None, name: str | None = None) -> LogRecord:
    return LogRecord(
        "controller.log", 1, "kubevirt_json", "info", msg, None, namespace=namespace, name=name
    )


@pytest.mark.parametrize(
    "msg",
    [
        "Moving vmi web in namespace prod on unresponsive node to failed state",  # node.go:278
        "Proactive update of VM prod/web by deleting outdated VMI",  # pool.go:1636
        "Migration target pod for VMI [prod/web] is currently unschedulable.",  # migration.go:1740
    ],
)
def test_a_line_naming_the_vm_in_its_text_is_attributed(msg):
    found = attribute(_record(msg, namespace="kubevirt", name="virt-handler-x"), SCOPE, {})
    assert found is not None and found.via == "named in message"


@pytest.mark.parametrize(
    "msg",
    [
        "Proactive update of VM prod/web-2 by deleting outdated VMI",  # another VM
        "Moving vmi web-2 in namespace prod on unresponsive node to failed state",
        "Moving vmi web in namespace staging on unresponsive node to failed state",
        "Marked Migration prod/web-mig failed on vmi due to target pod disappearing before "
        "migration kicked off.",  # the migration's name, not the VM's
        "web default prod",  # both words, but the line speaks of no VM or VMI
    ],
)
def test_a_look_alike_name_is_not_attributed(msg):
    assert attribute(_record(msg), SCOPE, {}) is None


def test_the_name_alone_counts_in_a_line_logged_in_the_vms_namespace():
    """A line logged with an object of the VM's namespace (a snapshot's, say) that names the VM
    alone; the same text with no object (source.go:463 at v1.9.0) could be any namespace's."""
    msg = "Failed freezing vm web: guest agent not connected"
    snapshot = _record(msg, namespace="prod", name="web-snap-1")
    assert attribute(snapshot, SCOPE, {}) is not None
    assert attribute(_record(msg, namespace="staging", name="web-snap-1"), SCOPE, {}) is None
    other = _record("Failed freezing vm web-2: timeout", namespace="prod", name="web-snap-1")
    assert attribute(other, SCOPE, {}) is None
    assert attribute(_record(msg), SCOPE, {}) is None


def test_a_restore_and_a_snapshot_of_the_vm_reach_its_timeline():
    """The restore controller logs with the restore (``Updating VirtualMachineRestore``,
    restore.go:202 at v1.9.0) and Events name the snapshot, its content and the restore."""
    from kvtrace.sources.bundle import open_bundle
    from kvtrace.timeline.build import build_timeline
    from tests.conftest import SAMPLES

    with open_bundle(SAMPLES / "snapshot-restore") as evidence:
        timeline = build_timeline(evidence, "default", "vm-0")
    kinds = {r.arg("kind") for r in timeline.rows if r.origin == "event"}
    assert {"VirtualMachineSnapshot", "VirtualMachineRestore"} <= kinds
    assert any(r.what == "Updating VirtualMachineRestore" for r in timeline.rows)
