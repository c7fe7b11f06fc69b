"""The message catalog recognises every virt-controller line the timeline depends on."""

from __future__ import annotations

import pytest

from kvtrace.timeline import catalog

EXAMPLES = [
    (
        "Stopping VM with VMI in phase Failed and VM runStrategy: Always",
        "vm.stop",
        {"phase": "Failed", "strategy": "Always"},
    ),
    (
        "Stopping VM with VMI in phase Succeeded and VM runStrategy: RerunOnFailure",
        "vm.stop",
        {"phase": "Succeeded", "strategy": "RerunOnFailure"},
    ),
    (
        "Running with VMI in phase Stopping VM due to stop request and VM runStrategy: Manual",
        "vm.stop-manual",
        {"phase": "Running", "strategy": "Manual"},
    ),
    (
        "Stopping VM with VMI in phase Running due to runStrategy: Halted",
        "vm.stop-halted",
        {"phase": "Running", "strategy": "Halted"},
    ),
    ("Starting VM due to runStrategy: Always", "vm.start", {"strategy": "Always"}),
    (
        "Starting VM due to start request and runStrategy: Manual",
        "vm.start-request",
        {"strategy": "Manual"},
    ),
    (
        "Started VM by creating the new virtual machine instance testvm",
        "vm.created",
        {"vmi": "testvm"},
    ),
    ("Failed to create VirtualMachineInstance: /", "vm.create-failed", {"vmi": "/"}),
    (
        "Dispatching delete event for vmi default/testvm with phase Failed",
        "vm.deleted",
        {"key": "default/testvm", "phase": "Failed"},
    ),
    (
        "Delaying start of VM Starting VM with 'runStrategy: Always' due to start failure backoff. Waiting 12 more seconds before starting.",
        "vm.backoff",
        {"strategy": "Always", "seconds": "12"},
    ),
    ("re-enqueuing VirtualMachine default/testvm", "vm.requeue", {"key": "default/testvm"}),
    ("reenqueuing VirtualMachineInstance default/testvm", "vmi.requeue", {"key": "default/testvm"}),
    (
        "processing forced restart request for VMI with phase Running and VM runStrategy: Always",
        "vm.restart-request",
        {"phase": "Running", "strategy": "Always"},
    ),
    (
        "attempting to acquire leader lease kubevirt/virt-controller...",
        "leader.attempt",
        {"lock": "kubevirt/virt-controller"},
    ),
    (
        "successfully acquired lease kubevirt/virt-controller",
        "leader.acquired",
        {"lock": "kubevirt/virt-controller"},
    ),
    ("leaderelection lost", "leader.lost", {}),
    (
        "STARTING controllers with following threads : node 3, vmi 10, replicaset 3, vm 3, migration 3, evacuation 3, disruptionBudget 3",
        "leader.controllers",
        {},
    ),
]


@pytest.mark.parametrize(("text", "message_id", "args"), EXAMPLES)
def test_message_is_recognised_by_text(text, message_id, args):
    found = catalog.match(text)
    assert found is not None
    entry, matched = found
    assert entry.id == message_id
    assert matched == args


def test_unknown_text_is_not_matched():
    assert catalog.match("Stopping VM because I felt like it") is None


def test_positions_identify_the_release():
    entry, _ = catalog.match("Starting VM due to runStrategy: Always")  # type: ignore[misc]
    assert catalog.versions_for_pos(entry, "vm.go:1032") == ["v1.9.0"]
    assert catalog.versions_for_pos(entry, "vm.go:1031") == ["v1.7.3"]
    assert catalog.versions_for_pos(entry, "vm.go:9999") == []


def test_ids_are_unique():
    ids = [m.id for m in catalog.CATALOG]
    assert len(ids) == len(set(ids))
