"""must-gather --vm-incident bundles and their text events table."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from kvtrace.evidence import EVENT, VM, VMI
from kvtrace.sources.bundle import open_bundle
from kvtrace.sources.events_table import EVENTS_TABLE

NS = "shop-prod"
LAUNCHER = "virt-launcher-pg-main-x7k2d"


def _line(age: str, kind: str, reason: str, obj: str, message: str) -> str:
    return f"{age:<20}{kind:<10}{reason:<19}{obj:<38}{message}\n"


TABLE = (
    _line("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE")
    + _line(
        "52m",
        "Normal",
        "SuccessfulCreate",
        "virtualmachine/pg-main",
        "Started the virtual machine by creating the new virtual machine instance pg-main",
    )
    + _line(
        "5m (x7 over 40m)",
        "Warning",
        "BackOff",
        f"pod/{LAUNCHER}",
        "Back-off restarting failed container compute",
    )
)


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _incident(root: Path, with_timestamp_file: bool = True) -> Path:
    image = root / "quay-io-kubevirt-must-gather-sha256-89ab"
    _write(image, "version", "kubevirt/must-gather\nv1.9.0\n")
    _write(
        image,
        "incident-summary.yaml",
        f'namespace: {NS}\nvm: pg-main\nincident_time: "2025-03-07T09:30:00Z"\n'
        "collection_time: 2025-03-07T10:00:00Z\n"
        "skipped:\n- {what: virsh dumps, reason: pod not running}\n",
    )
    _write(
        image,
        f"namespaces/{NS}/kubevirt.io/virtualmachines/pg-main.yaml",
        f"apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: pg-main\n"
        f"  namespace: {NS}\n  uid: 940dbef6-7c4e-47dd-8335-331151d9fd89\n",
    )
    _write(
        image,
        f"namespaces/{NS}/kubevirt.io/virtualmachineinstances/pg-main.yaml",
        f"apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: pg-main\n"
        f"  namespace: {NS}\n  uid: afde60bc-ef93-48b9-bf25-b4ca5b005407\n",
    )
    _write(image, f"namespaces/{NS}/events", TABLE)
    _write(image, f"namespaces/{NS}/core/pods/{LAUNCHER}/compute-current.log", '{"msg":"a"}\n')
    _write(image, f"namespaces/{NS}/core/pods/{LAUNCHER}/compute-previous.log", '{"msg":"b"}\n')
    _write(
        image,
        f"namespaces/{NS}/pods/{LAUNCHER}/compute/compute/logs/current.log",
        '2025-03-07T09:59:00.1Z {"msg":"a"}\n',
    )
    if with_timestamp_file:
        _write(root, "timestamp", "2025-03-07 10:05:00.000000000 +0000 UTC m=+0.1\n")
    return root


def test_layout_objects_logs_and_gaps(tmp_path: Path) -> None:
    with open_bundle(_incident(tmp_path / "mg")) as evidence:
        assert (evidence.layout, evidence.coverage) == ("vm-incident", "low")
        assert [vm.name for vm in evidence.of_kind(VM)] == ["pg-main"]
        assert [vmi.name for vmi in evidence.of_kind(VMI)] == ["pg-main"]
        unprefixed = [log.info for log in evidence.logs if log.prefixed is False]
        assert sorted((i.pod, i.container, i.instance) for i in unprefixed) == [
            (LAUNCHER, "compute", "current"),
            (LAUNCHER, "compute", "previous"),
        ]
        assert [log.info.instance for log in evidence.logs if log.prefixed] == ["current"]
        assert evidence.manifest is not None and evidence.manifest["vm"] == "pg-main"
        missing = " | ".join(evidence.missing)
        for gap in ("no virt-controller logs", "Lease", "ControllerRevisions", "virsh dumps"):
            assert gap in missing


def test_events_table_becomes_marked_events_with_intervals(tmp_path: Path) -> None:
    with open_bundle(_incident(tmp_path / "mg")) as evidence:
        assert evidence.captured_at == datetime(
            2025, 3, 7, 10, 5, tzinfo=UTC
        )  # timestamp file wins
        created, backoff = sorted(evidence.of_kind(EVENT), key=lambda e: e.body["reason"])[::-1]
        assert EVENTS_TABLE in created.flags
        assert created.body["involvedObject"] == {
            "kind": "VirtualMachine",
            "name": "pg-main",
            "namespace": NS,
        }
        assert created.body["lastTimestamp"] is None
        assert created.body["x-kvtrace"]["lastSeen"] == {
            "after": "2025-03-07T09:12:00.000000Z",
            "notAfter": "2025-03-07T09:13:00.000000Z",
        }
        assert backoff.body["count"] == 7
        assert backoff.body["x-kvtrace"]["firstSeen"] == {
            "after": "2025-03-07T09:24:00.000000Z",
            "notAfter": "2025-03-07T09:25:00.000000Z",
        }
        assert backoff.seen_in == [created.seen_in[0]]


def test_summary_time_is_the_fallback_collection_time(tmp_path: Path) -> None:
    with open_bundle(_incident(tmp_path / "mg", with_timestamp_file=False)) as evidence:
        assert evidence.captured_at == datetime(2025, 3, 7, 10, 0, tzinfo=UTC)
