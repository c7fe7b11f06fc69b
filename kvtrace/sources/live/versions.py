"""What ``kvtrace version`` asks a live cluster: two GETs, nothing collected.

``/version`` gives the Kubernetes release; the KubeVirt CRs (cluster-wide, else in each known
install namespace) give ``status.observedKubeVirtVersion``, the release KubeVirt's operator says
is deployed. One attempt per request: ``version`` answers fast or says why it cannot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvtrace.errors import ApiError, TransientError, UnsafeResponse
from kvtrace.evidence import KUBEVIRT
from kvtrace.sources.live.settings import KUBEVIRT_NAMESPACES, ClusterSettings

_FAILURES = (ApiError, TransientError, UnsafeResponse)


@dataclass
class ClusterVersions:
    """The cluster's releases as its API says them; ``problems`` says what could not be read."""

    cluster: str
    kubernetes: str | None = None
    kubevirt_crs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def cluster_versions(settings: ClusterSettings) -> ClusterVersions:
    """The Kubernetes and KubeVirt releases of the cluster ``settings`` reach (GET only)."""
    from kvtrace.sources.live.api import ApiReader, RetryPolicy
    from kvtrace.sources.live.client import connect

    connection = connect(settings)
    try:
        reader = ApiReader(connection, RetryPolicy(attempts=1), verbose=settings.verbose)
        found = ClusterVersions(connection.context or connection.server)
        found.kubernetes = _kubernetes_version(reader, found)
        found.kubevirt_crs = _kubevirt_crs(reader, found)
        return found
    finally:
        connection.close()


def _kubernetes_version(reader: Any, found: ClusterVersions) -> str | None:
    try:
        version = reader.get_json("/version")
    except TransientError:
        raise  # unreachable: the command says so, as kubectl version does
    except (ApiError, UnsafeResponse) as exc:
        found.problems.append(f"GET /version: {exc}")
        return None
    return str(version.get("gitVersion") or "") or None


def _kubevirt_crs(reader: Any, found: ClusterVersions) -> list[dict[str, Any]]:
    from kvtrace.sources.live.plan import RESOURCES

    resource = RESOURCES[KUBEVIRT]
    try:
        return list(reader.list_items(resource.path()).items)
    except _FAILURES as exc:
        why = str(exc)
    for namespace in KUBEVIRT_NAMESPACES:  # a namespaced Role may still allow one of these
        try:
            items = list(reader.list_items(resource.path(namespace)).items)
        except _FAILURES:
            continue
        if items:
            return items
    found.problems.append(f"no KubeVirt CR readable ({why})")
    return []
