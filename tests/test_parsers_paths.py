"""source_from_path: pod identity from the path layouts of parsers/paths.py."""

from __future__ import annotations

import pytest

from parsers.paths import source_from_path
from parsers.records import SourceInfo

POD = "virt-controller-7c9d5b6f4-h2xqm"
CID = "7ac33af4d1fd184679f368d174b034525392be9800cf2b2214d1c7360bb4eea6"


@pytest.mark.parametrize(
    ("path", "pod", "namespace", "container", "instance"),
    [
        (f"/var/log/containers/{POD}_kubevirt_virt-controller-{CID}.log",
         POD, "kubevirt", "virt-controller", None),
        (f"{POD}_kubevirt_virt-controller-{CID}.log", POD, "kubevirt", "virt-controller", None),
        (f"/var/log/pods/kubevirt_{POD}_02e7bf08-8e0b-4331-babe-517634d9abae/virt-controller/2.log",
         POD, "kubevirt", "virt-controller", None),
        ("/var/log/pods/kubevirt_virt-handler-r7t5k_3c1f0a2e-1111-4222-8333-944455556666"
         "/virt-handler/0.log.20250307-091500.gz", "virt-handler-r7t5k", "kubevirt", "virt-handler",
         None),
        (f"must-gather.local.1/quay-io-x/namespaces/kubevirt/pods/{POD}/virt-controller/"
         "virt-controller/logs/current.log", POD, "kubevirt", "virt-controller", "current"),
        (f"namespaces/kubevirt/pods/{POD}/virt-controller/virt-controller/logs/previous.insecure.l"
         "og",
         POD, "kubevirt", "virt-controller", "previous"),
        ("namespaces/shop-prod/core/pods/virt-launcher-pg-main-x7k2d/compute-previous.log",
         "virt-launcher-pg-main-x7k2d", "shop-prod", "compute", "previous"),
        ("dump/kubevirt/virt-handler-r7t5k/logs.txt", "virt-handler-r7t5k", "kubevirt", None, None),
        (f"bundle/logs/kubevirt/{POD}/virt-controller/current.log",
         POD, "kubevirt", "virt-controller", "current"),
        (f".\\logs\\kubevirt\\{POD}\\virt-controller\\previous.log",
         POD, "kubevirt", "virt-controller", "previous"),
    ],
)  # fmt: skip
def test_known_layouts(
    path: str, pod: str, namespace: str, container: str | None, instance: str | None
) -> None:
    assert source_from_path(path) == SourceInfo(path, pod, namespace, container, instance)


@pytest.mark.parametrize(
    "path",
    [
        "./kubevirt.virt-controller-7c9d5b6f4-h2xqm.virt-controller.20250307.log.gz",
        "controller.log",
        "",
        "stdin",
        "/var/log/containers/not-a-cri-name.log",
    ],
)
def test_unknown_layouts_keep_only_the_source_id(path: str) -> None:
    assert source_from_path(path) == SourceInfo(path)
