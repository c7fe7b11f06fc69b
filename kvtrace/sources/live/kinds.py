"""Reading one kind that a cluster may serve at another version, or not at all, and the words
for a kind that could not be read.

A list's 404 says the resource is not served at that group/version: a list of a served resource
in a namespace that holds none is an empty 200. So for the optional kinds (pools, replica sets,
snapshots, restores: an older KubeVirt, or a cluster without the snapshot API) a 404 tries the
next version, and a 404 on every version is an absence the manifest records as such. A 403 names
the rule of docs/rbac.yaml that would allow the request.
"""

from __future__ import annotations

from collections.abc import Callable

from kvtrace.errors import ApiError, ClusterError
from kvtrace.sources.live.api import ApiReader, Query
from kvtrace.sources.live.plan import OPTIONAL_KINDS, RESOURCES, Item

NOT_SERVED = "not served by this cluster"


class NotServed(ClusterError):
    """Every version of an optional kind answered 404: the cluster does not serve it."""

    def __init__(self, kind: str) -> None:
        resource = RESOURCES[kind]
        versions = " or ".join(resource.versions)
        super().__init__(
            f"{NOT_SERVED} (no {resource.plural}.{resource.group} at {versions}: the API is not "
            "installed, or KubeVirt is older than this kind)"
        )
        self.kind = kind


def list_served(
    reader: ApiReader,
    kind: str,
    namespace: str | None,
    query: Query = (),
    keep: Callable[[Item], bool] | None = None,
) -> list[Item]:
    """Every item of ``kind`` at the first version the cluster serves."""
    resource = RESOURCES[kind]
    for version in resource.versions:
        try:
            return reader.list_items(resource.at(version).path(namespace), query, keep).items
        except ApiError as exc:
            if exc.status != 404 or kind not in OPTIONAL_KINDS:
                raise
    raise NotServed(kind)


def rbac_rule(kind: str, verb: str, role_in: str | None = None, name: str | None = None) -> str:
    """The rule to add to docs/rbac.yaml so that ``verb`` on ``kind`` is allowed: in the
    ClusterRole, or (``role_in``, the install namespace) in the Role of one named object."""
    resource = RESOURCES[kind]
    plural = f"{resource.plural}/log" if verb == "log" else resource.plural
    rule = (
        f'apiGroups: ["{resource.group}"], resources: ["{plural}"], '
        f'verbs: ["{"get" if verb == "log" else verb}"]'
    )
    if role_in and name:
        rule += f', resourceNames: ["{name}"]'
        role = f"the Role kvtrace-collect-leader in {role_in}"
        return f"grant it in {role} (docs/rbac.yaml): {{{rule}}}"
    return f"grant it in the ClusterRole kvtrace-collect (docs/rbac.yaml): {{{rule}}}"


def failure_reason(
    exc: ClusterError, kind: str, verb: str, role_in: str | None = None, name: str | None = None
) -> str:
    """Words for ``missing[].reason``; a 403 adds the rule that would allow the request."""
    if isinstance(exc, ApiError):
        if exc.status == 403 and kind in RESOURCES:
            return f"{exc.reason}; {rbac_rule(kind, verb, role_in, name)}"
        return exc.reason
    text = str(exc)
    return text.split(": ", 1)[1] if text.startswith("GET ") and ": " in text else text
