"""The launcher pod as read: its compute container (``spec.containers[name=compute]``), argv,
resources and the ``kubevirt.io/memory-overhead-bytes`` annotation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kvtrace.overhead.vmi_spec import FieldError, as_list, as_map, dig
from parsers.quantity import Quantity, QuantityError, parse_quantity

LAUNCHER_LABEL = "virt-launcher"
CREATED_BY = "kubevirt.io/created-by"
DOMAIN_ANNOTATION = "kubevirt.io/domain"
OVERHEAD_ANNOTATION = "kubevirt.io/memory-overhead-bytes"


@dataclass(frozen=True)
class PodView:
    body: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(dig(self.body, "metadata", "name") or "")

    @property
    def namespace(self) -> str:
        return str(dig(self.body, "metadata", "namespace") or "default")

    def label(self, key: str) -> str | None:
        value = dig(self.body, "metadata", "labels", key)
        return None if value is None else str(value)

    def annotation(self, key: str) -> str | None:
        value = dig(self.body, "metadata", "annotations", key)
        return None if value is None else str(value)

    @property
    def is_launcher(self) -> bool:
        return self.label("kubevirt.io") == LAUNCHER_LABEL

    def container(self, name: str, init: bool = False) -> Mapping[str, Any] | None:
        key = "initContainers" if init else "containers"
        for entry in as_list(dig(self.body, "spec", key)):
            if isinstance(entry, Mapping) and entry.get("name") == name:
                return entry
        return None

    @property
    def compute(self) -> Mapping[str, Any] | None:
        return self.container("compute")

    @property
    def argv(self) -> list[str]:
        return [str(a) for a in as_list(as_map(self.compute).get("command"))]

    def flag_value(self, flag: str) -> str | None:
        """The argv element after ``flag`` (flag and value are separate elements)."""
        argv = self.argv
        for index, arg in enumerate(argv[:-1]):
            if arg == flag:
                return argv[index + 1]
        return None

    @property
    def launcher_image(self) -> str | None:
        image = as_map(self.compute).get("image")
        return str(image) if image else None

    def compute_resource(self, kind: str, name: str) -> Quantity | None:
        """``containers[compute].resources.<kind>.<name>``, parsed."""
        return container_resource(self.compute, kind, name, "compute")


def container_resource(
    container: Mapping[str, Any] | None, kind: str, name: str, label: str
) -> Quantity | None:
    raw = dig(container, "resources", kind, name)
    if raw is None:
        return None
    try:
        return parse_quantity(raw)
    except QuantityError as err:
        raise FieldError(f"containers[{label}].resources.{kind}.{name}", str(err)) from err
