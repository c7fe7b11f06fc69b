"""How to reach a live cluster and what to read from it: plain data, no Kubernetes client import.

The command line builds these (``kvtrace/commands/``, the cluster flags in
``kvtrace/commands/options.py``); ``kvtrace/sources/live/client.py`` turns :class:`ClusterSettings`
into a connection, ``kvtrace/sources/live/collect.py`` reads :class:`CollectScope`. Keeping them
here lets ``kvtrace --help`` and offline commands run without importing ``kubernetes``: each heavy
library has one home module, and ``kubernetes``'s is the client.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
    cluster: str | None = None  # a kubeconfig cluster other than the context's
    user: str | None = None  # a kubeconfig user other than the context's
    server: str | None = None  # the API server's URL, over the kubeconfig's
    token: str | None = field(default=None, repr=False)  # a bearer token, never shown
    certificate_authority: str | None = None
    insecure_skip_tls_verify: bool = False
    request_timeout: float = 30.0  # seconds per connect and per read; 0 = wait forever
    as_user: str | None = None
    as_groups: tuple[str, ...] = ()
    as_uid: str | None = None
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
    vm_selector: str | None = None  # -l: sent as the VM list's labelSelector

    @property
    def all_namespaces(self) -> bool:
        return self.namespaces is None


def check_connection_flags(settings: ClusterSettings) -> None:
    """The combinations kubectl refuses, refused the same way (before any connection)."""
    if settings.insecure_skip_tls_verify and settings.certificate_authority:
        raise UsageError(
            "--insecure-skip-tls-verify and --certificate-authority exclude each other: give "
            "the CA file, or (only on a trusted network) skip verification"
        )
    if (settings.as_groups or settings.as_uid) and not settings.as_user:
        raise UsageError("--as-group and --as-uid impersonate a user: give --as USER too")
    if settings.server is not None and not settings.server.startswith(("https://", "http://")):
        raise UsageError(
            f"--server {settings.server!r}: give the API server's URL, such as "
            "https://api.example.com:6443"
        )


def parse_request_timeout(text: str) -> float:
    """``--request-timeout``: ``30``, ``30s``, ``1m``, ``500ms`` (as kubectl); ``0`` = none."""
    match = _TIMEOUT.match(text.strip())
    if match is None:
        raise UsageError(
            f"cannot read --request-timeout {text!r}: give a duration such as 30s, 1m or 500ms"
        )
    return float(match["n"]) * _UNIT_SECONDS[match["unit"]]
