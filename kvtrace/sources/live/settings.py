"""How to reach a live cluster and what to read from it: plain data, no Kubernetes client import.

The command line builds these (``kvtrace/commands/``, the cluster flags in
``kvtrace/commands/options.py``); ``kvtrace/sources/live/client.py`` turns :class:`ClusterSettings`
into a connection, ``kvtrace/sources/live/collect.py`` reads :class:`CollectScope`. Keeping them
here lets ``kvtrace --help`` and offline commands run without importing ``kubernetes``: each heavy
library has one home module, and ``kubernetes``'s is the client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvtrace.errors import UsageError

# Where KubeVirt is installed, in the order auto-detection tries them (vanilla ``kubevirt``;
# OpenShift ``openshift-cnv``; HCO default ``kubevirt-hyperconverged``; Harvester
# ``harvester-system``).
KUBEVIRT_NAMESPACES = ("kubevirt", "openshift-cnv", "kubevirt-hyperconverged", "harvester-system")

_TIMEOUT = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h)?$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


@dataclass(frozen=True)
class ClusterSettings:
    """Connection flags, as kubectl spells them. ``None`` means "as the kubeconfig says"."""

    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: float = 30.0  # seconds per connect and per read; 0 = wait forever
    as_user: str | None = None
    as_groups: tuple[str, ...] = ()
    kubevirt_namespace: str | None = None
    quiet: bool = False
    verbose: bool = False


@dataclass(frozen=True)
class CollectScope:
    """What to read: namespaces, VMs (``ns/name``), the log window.

    ``namespaces`` is ``None`` for every namespace (``-A``) and empty when ``-n`` was not given:
    then the kubeconfig context's namespace decides (else ``default``), as with kubectl.
    """

    namespaces: tuple[str, ...] | None = ()
    vms: tuple[tuple[str, str], ...] = ()
    since_seconds: int | None = None
    since_time: str | None = None  # RFC 3339, when --since gave an absolute time

    @property
    def all_namespaces(self) -> bool:
        return self.namespaces is None


def parse_request_timeout(text: str) -> float:
    """``--request-timeout``: ``30``, ``30s``, ``1m``, ``500ms`` (as kubectl); ``0`` = none."""
    match = _TIMEOUT.match(text.strip())
    if match is None:
        raise UsageError(
            f"cannot read --request-timeout {text!r}: give a duration such as 30s, 1m or 500ms"
        )
    return float(match["n"]) * _UNIT_SECONDS[match["unit"]]
