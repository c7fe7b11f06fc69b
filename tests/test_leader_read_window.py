"""A bundle is captured over minutes, not at an instant (issue 15, item 9): a Lease read part-way
through a must-gather is judged at the time it may have been read — the collection's window from
the ``timestamp`` file — not at the collection's end."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvsim.bundle import to_yaml, write_must_gather
from kvsim.histories import legitimate
from tests.helpers import run_cli


@pytest.fixture(scope="module")
def must_gather_with_lease(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kvsim's must-gather (its window: 1.8 s before the capture to 48.5 s after) plus the
    Lease, as a custom gather of the kubevirt namespace writes it."""
    capture = legitimate(5).capture()
    root = write_must_gather(capture, tmp_path_factory.mktemp("mg"), "window")
    [image] = root.glob("must-gather.local.*/quay-io-*")
    [lease] = capture.objects["Lease"]
    path = image / "namespaces/kubevirt/coordination.k8s.io/leases/virt-controller.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(to_yaml(lease))
    return root


def test_a_lease_live_at_the_start_of_the_collection_is_not_called_expired(
    must_gather_with_lease, capsys
):
    code, out, err = run_cli(capsys, "leader", "status", "--bundle", str(must_gather_with_lease))
    assert code == 0, out + err
    assert "State:        undecided (read during the collection)" in out
    assert "was read at some moment between" in out and "decides it" in out
    assert "never collects the virt-controller Lease" not in out


def test_collection_time_is_no_leaderless_gap(must_gather_with_lease, capsys):
    code, out, err = run_cli(capsys, "leader", "history", "--bundle", str(must_gather_with_lease))
    assert code == 0, out + err
    assert "Leaderless gaps: none" in out
    assert "never collects the virt-controller Lease" not in out


def test_without_a_lease_the_must_gather_gap_is_still_said(tmp_path, capsys):
    root = write_must_gather(legitimate(5).capture(), tmp_path, "window")
    _, out, _ = run_cli(capsys, "leader", "status", "--bundle", str(root))
    assert "never collects the virt-controller Lease" in out
