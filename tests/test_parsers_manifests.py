"""parsers.manifests: YAML/JSON tolerance and the ``oc get events`` text table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.manifests import (
    AgeInterval,
    load_manifests,
    looks_like_events_table,
    parse_age,
    parse_events_table,
)

VMI_YAML = b"""apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: pg-main
  namespace: shop-prod
  creationTimestamp: 2025-03-07T09:14:06Z
  uid: afde60bc-ef93-48b9-bf25-b4ca5b005407
status:
  phase: Running
  guestOSInfo: {id: yes}
  ready: true
  flag: no
"""


def test_unquoted_timestamps_stay_strings() -> None:
    loaded = load_manifests(VMI_YAML)
    assert loaded.error is None
    meta = loaded.objects[0]["metadata"]
    assert meta["creationTimestamp"] == "2025-03-07T09:14:06Z"


def test_yaml11_booleans_stay_strings_but_true_is_bool() -> None:
    status = load_manifests(VMI_YAML).objects[0]["status"]
    assert status["guestOSInfo"] == {"id": "yes"}
    assert status["flag"] == "no"
    assert status["ready"] is True


def test_json_is_sniffed_first_even_in_yaml_file() -> None:
    data = b'  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","creationTimestamp":"x"}}'
    loaded = load_manifests(data, "pods.yaml")
    assert [o["kind"] for o in loaded.objects] == ["Pod"]


def test_multi_document_yaml() -> None:
    data = b"---\nkind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n---\n"
    assert [o["metadata"]["name"] for o in load_manifests(data).objects] == ["a", "b"]


def test_olm_dash_separators_split_documents() -> None:
    data = b"kind: Subscription\nmetadata: {name: a}\n---------------\n" + (
        b"kind: Subscription\nmetadata: {name: b}\n"
    )
    assert len(load_manifests(data).objects) == 2


def test_typed_list_items_inherit_kind_and_api_version() -> None:
    data = b'{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"p"}}]}'
    (pod,) = load_manifests(data).objects
    assert (pod["kind"], pod["apiVersion"]) == ("Pod", "v1")


def test_generic_list_uses_default_kind_and_not_list_api_version() -> None:
    data = b"apiVersion: v1\nkind: List\nitems:\n- metadata: {name: vm}\n" + (
        b"- kind: Pod\n  metadata: {name: p}\n"
    )
    objects = load_manifests(data, default_kind="VirtualMachine").objects
    assert [o["kind"] for o in objects] == ["VirtualMachine", "Pod"]
    assert "apiVersion" not in objects[0]


def test_prompt_line_and_ellipsis_are_repaired_and_named() -> None:
    data = b"$ kubectl get vmi pg-main -o yaml\n" + VMI_YAML.replace(
        b"status:\n", b"...\nstatus:\n"
    )
    loaded = load_manifests(data)
    assert loaded.error is None
    assert loaded.objects[0]["status"]["phase"] == "Running"
    assert any("leading line" in r for r in loaded.repairs)
    assert any("'...'" in r for r in loaded.repairs)


def test_unrepairable_yaml_reports_original_line_and_column() -> None:
    data = b"user@host$ oc get vm\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n"
    loaded = load_manifests(data, "paste.yaml")
    assert loaded.objects == []
    assert loaded.error is not None
    assert loaded.error.path == "paste.yaml"
    assert loaded.error.line is not None and loaded.error.line >= 5
    assert str(loaded.error).startswith("paste.yaml:")


@pytest.mark.parametrize(
    "garbage",
    [b"", b"\x00\xff\xfe", b"{{{{", b"- - - :", b": : :\n\t\tx", b"[1, 2", "é\u2028".encode()],
)
def test_garbage_never_raises(garbage: bytes) -> None:
    loaded = load_manifests(garbage)
    assert all(isinstance(o, dict) for o in loaded.objects)


def test_scalar_documents_yield_no_objects() -> None:
    assert load_manifests(b"just a line of text\n").objects == []


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("45s", 45, 46),
        ("3m10s", 190, 191),
        ("52m", 3120, 3180),
        ("5h", 18000, 21600),
        ("3d", 259200, 345600),
        ("2d5h", 190800, 194400),
    ],
)
def test_parse_age_is_an_interval_of_the_smallest_unit(text: str, low: int, high: int) -> None:
    assert parse_age(text) == AgeInterval(low, high)


@pytest.mark.parametrize("text", ["<unknown>", "", "5x", "m"])
def test_unknown_ages_are_none(text: str) -> None:
    assert parse_age(text) is None


def _table_line(age: str, kind: str, reason: str, obj: str, message: str) -> str:
    return f"{age:<20}{kind:<10}{reason:<19}{obj:<38}{message}"


LAUNCHER = "pod/virt-launcher-pg-main-x7k2d"
EVENTS = "\n".join(
    [
        _table_line("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"),
        _table_line(
            "52m",
            "Normal",
            "SuccessfulCreate",
            "virtualmachine/pg-main",
            "Started the virtual machine by creating the new virtual machine instance pg-main",
        ),
        _table_line(
            "51m",
            "Normal",
            "SuccessfulCreate",
            "virtualmachineinstance/pg-main",
            "Created virtual machine pod virt-launcher-pg-main-x7k2d",
        ),
        _table_line(
            "5m (x7 over 40m)",
            "Warning",
            "BackOff",
            LAUNCHER,
            "Back-off restarting failed container",
        ),
        _table_line("<unknown>", "Normal", "Scheduled", LAUNCHER, "Successfully assigned"),
    ]
)


def test_events_table_splits_by_header_offsets() -> None:
    assert looks_like_events_table(EVENTS)
    table = parse_events_table(EVENTS)
    assert table.errors == []
    first, second, backoff, unknown = table.rows
    assert first.object_kind == "VirtualMachine" and first.object_name == "pg-main"
    assert first.message.endswith("virtual machine instance pg-main")
    assert first.last_seen == AgeInterval(3120, 3180) and first.line_no == 2
    assert second.object_kind == "VirtualMachineInstance"
    assert (backoff.count, backoff.first_seen) == (7, AgeInterval(2400, 2460))
    assert backoff.last_seen == AgeInterval(300, 360) and backoff.type == "Warning"
    assert unknown.last_seen is None and unknown.reason == "Scheduled"


def test_events_table_with_namespace_column_and_misaligned_row() -> None:
    text = (
        "NAMESPACE   LAST SEEN   TYPE     REASON   OBJECT        MESSAGE\n"
        "shop-prod   45s         Normal   Killing  pod/launcher  Stopping container compute\n"
        "shop-prod  3m10s  Warning  Failed  pod/launcher  Error: x\n"
    )
    aligned, shifted = parse_events_table(text).rows
    assert aligned.namespace == "shop-prod" and aligned.message == "Stopping container compute"
    assert not aligned.realigned
    assert shifted.realigned and shifted.reason == "Failed"
    assert shifted.last_seen == AgeInterval(190, 191)


def test_events_table_without_header_is_an_error_value() -> None:
    table = parse_events_table("this is not a table\n", "events")
    assert table.rows == [] and table.errors[0].path == "events"


def test_no_resources_found_is_empty_not_an_error() -> None:
    table = parse_events_table("No resources found in shop-prod namespace.\n")
    assert table.rows == [] and table.errors == []


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_load_manifests_never_raises_on_any_bytes(data: bytes) -> None:
    loaded = load_manifests(data, "fuzz")
    assert all(isinstance(o, dict) for o in loaded.objects)
    assert loaded.error is None or loaded.error.path == "fuzz"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_events_table_never_raises_on_any_text(text: str) -> None:
    table = parse_events_table("LAST SEEN   TYPE   REASON   OBJECT   MESSAGE\n" + text)
    assert all(row.line_no >= 2 for row in table.rows)
