"""``kvtrace collect``: read a live cluster, read-only, into a kvtrace bundle.

Order: ``/version`` (also the reachability check), the KubeVirt install namespace, then in
parallel the scoped lists (VMs, VMIs, VMIMs, launcher pods, ControllerRevisions), the install
namespace's objects (virt-controller pods, the Lease and pre-v1.3 Endpoints lock, the KubeVirt
CR), the Events about all of those, the nodes, and finally the virt-controller logs streamed to
disk. A 403/404/5xx on one kind becomes a ``missing[]`` entry and the rest is still read; only an
unreachable server or rejected credentials stop the collection (docs/collect.md lists what is
read and what a live cluster cannot give).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvtrace import __version__
from kvtrace.errors import ApiError, ClusterError, TransientError, UnsafeResponse
from kvtrace.evidence import (
    ENDPOINTS,
    EVENT,
    KUBEVIRT,
    LEASE,
    NODE,
    POD,
    REVISION,
    VM,
    VMI,
    VMIM,
)
from kvtrace.sources.live.api import ApiReader, Query
from kvtrace.sources.live.kinds import NotServed, failure_reason, list_served
from kvtrace.sources.live.limits import LiveLimits, truncation
from kvtrace.sources.live.plan import (
    CONTROLLER_SELECTOR,
    KIND_ORDER,
    LAUNCHER_SELECTOR,
    LOCK_NAME,
    OPTIONAL_KINDS,
    RESOURCES,
    Item,
    VmSelection,
    event_filter,
    is_leader_lock,
    keep_of_scope,
    key_of,
    log_targets,
    node_names,
)
from kvtrace.sources.live.progress import Progress
from kvtrace.sources.live.screen import (
    check_scope,
    usable_log_targets,
    usable_namespaces,
    usable_nodes,
)
from kvtrace.sources.live.settings import KUBEVIRT_NAMESPACES, ClusterSettings, CollectScope
from kvtrace.sources.live.workers import bounded_map
from kvtrace.sources.live.writer import BundleWriter

if TYPE_CHECKING:
    from kvtrace.sources.live.client import Connection

WORKERS = 4  # concurrent requests: enough to hide latency, gentle on the API server
_FAILURES = (ApiError, TransientError, UnsafeResponse)
Job = tuple[str, str | None, Query, Callable[[Item], bool] | None]


@dataclass
class CollectResult:
    """What was written: the manifest (as written) and where."""

    manifest: dict[str, Any]
    root: Path

    @property
    def partial(self) -> bool:
        """Something was not read; a kind the cluster does not serve is not a gap."""
        return any(not m.get("notServed") for m in self.manifest.get("missing") or [])


def collect_bundle(
    connection: Connection,
    scope: CollectScope,
    settings: ClusterSettings,
    root: Path,
    progress: Progress,
) -> CollectResult:
    """Collect the scope into the bundle directory ``root`` (which the caller owns)."""
    reader = ApiReader(
        connection,
        verbose=settings.verbose,
        on_request=progress.request,
        limits=LiveLimits.from_env(),
    )
    collector = Collector(reader, BundleWriter(root), progress, settings)
    collector.resolve(scope, connection.default_namespace)
    try:
        return CollectResult(collector.run(), root)
    except BaseException:
        reader.cancelled.set()  # running streams stop at their next chunk
        raise


class Collector:
    """One collection run. ``objects`` holds the kept items by kind until they are written."""

    def __init__(
        self, reader: ApiReader, writer: BundleWriter, progress: Progress, settings: ClusterSettings
    ) -> None:
        self.reader, self.writer, self.progress, self.settings = reader, writer, progress, settings
        self.objects: dict[str, list[Item]] = {}
        self.read_kinds: set[str] = set()  # kinds with at least one successful request
        self.namespaces: list[str] | None = None
        self.selection = VmSelection()
        self.since: Query = ()
        self.vm_query: Query = ()  # -l: the VM list's labelSelector
        self.kubevirt_namespace: str | None = None

    def resolve(self, scope: CollectScope, default_namespace: str) -> None:
        """Namespaces and VMs to read: bare ``--vm`` names and no ``-n`` use the context's."""
        base = scope.namespaces[0] if scope.namespaces else default_namespace
        vms = frozenset((ns or base, name) for ns, name in scope.vms)
        check_scope(scope, base, self.settings.kubevirt_namespace)
        self.selection = VmSelection(vms)
        if vms:
            self.namespaces = sorted({ns for ns, _ in vms})
        elif scope.namespaces is not None:
            self.namespaces = sorted(set(scope.namespaces)) if scope.namespaces else [base]
        if scope.vm_selector:
            self.vm_query = (("labelSelector", scope.vm_selector),)
        if scope.since_seconds is not None:
            self.since = (("sinceSeconds", str(scope.since_seconds)),)
        elif scope.since_time:
            self.since = (("sinceTime", scope.since_time),)

    def run(self) -> dict[str, Any]:
        captured = datetime.now(timezone.utc)
        server_version = self._server_version()
        self.progress.set_phase("finding KubeVirt")
        self.kubevirt_namespace = self._find_kubevirt()
        self.progress.set_phase("reading objects")
        self._scoped_objects()
        self._install_objects()
        self._events()
        self._nodes()
        self._write_objects()
        self.progress.set_phase("reading logs")
        self._logs()
        return self.writer.write_manifest(self._header(captured, server_version))

    # --- requests -------------------------------------------------------------------------

    def _list(self, job: Job) -> list[Item] | None:
        """One list; a failure is recorded as missing (kind, namespace, reason) and is None."""
        kind, namespace, query, keep = job
        try:
            items = list_served(self.reader, kind, namespace, query, keep)
        except NotServed as exc:
            self.writer.add_not_served(str(exc), kind)
            return None
        except _FAILURES as exc:
            reason = failure_reason(exc, kind, "list")
            self.writer.add_missing(reason, kind=kind, namespace=namespace)
            return None
        self.read_kinds.add(kind)
        return items

    def _get(self, kind: str, namespace: str | None, name: str) -> Item | None:
        """One named object; 404 is None without a missing entry (the caller decides)."""
        try:
            item = self.reader.get_json(RESOURCES[kind].path(namespace, name))
        except (ApiError, TransientError) as exc:
            if isinstance(exc, ApiError) and exc.status == 404:
                self.read_kinds.add(kind)
                return None
            reason = failure_reason(exc, kind, "get", namespace, name)
            self.writer.add_missing(f"{name}: {reason}", kind=kind, namespace=namespace)
            return None
        except UnsafeResponse as exc:
            self.writer.add_missing(
                failure_reason(exc, kind, "get"), kind=kind, namespace=namespace
            )
            return None
        self.read_kinds.add(kind)
        return item

    def _run_jobs(self, jobs: list[Job]) -> None:
        for job, items in zip(jobs, bounded_map(self._list, jobs, WORKERS), strict=True):
            if items is not None:
                self._add(job[0], items)

    def _add(self, kind: str, items: list[Item]) -> None:
        known = {_identity(i) for i in self.objects.get(kind, [])}
        kept = self.objects.setdefault(kind, [])
        kept.extend(i for i in items if _identity(i) not in known)

    # --- what is read ---------------------------------------------------------------------

    def _server_version(self) -> str | None:
        try:
            version = self.reader.get_json("/version")
        except TransientError as exc:
            raise ClusterError(
                f"cannot reach the API server {self.reader.connection.server}: "
                f"{failure_reason(exc, '', 'get')}; "
                "check the kubeconfig's server, the network, or --request-timeout"
            ) from None
        except (ApiError, UnsafeResponse) as exc:
            self.writer.add_missing(failure_reason(exc, "", "get"), kind="ServerVersion")
            return None
        return str(version.get("gitVersion") or "") or None

    def _find_kubevirt(self) -> str | None:
        """The install namespace: ``--kubevirt-namespace``, the KubeVirt CR, or known names."""
        namespace = self.settings.kubevirt_namespace
        if namespace is None:
            namespace = self._namespace_of_kubevirt_cr() or self._probe_controller_pods()
        if namespace is None:
            self.writer.add_missing(
                "KubeVirt install namespace not found (no readable KubeVirt CR, no virt-controller"
                f" pods in {', '.join(KUBEVIRT_NAMESPACES)}); pass --kubevirt-namespace",
                kind=KUBEVIRT,
            )
            return None
        items = self._list((KUBEVIRT, namespace, (), None))
        if items is not None:
            self._add(KUBEVIRT, items)
        return namespace

    def _namespace_of_kubevirt_cr(self) -> str | None:
        try:
            found = self.reader.list_items(RESOURCES[KUBEVIRT].path()).items
        except _FAILURES:
            return None  # forbidden cluster-wide, or KubeVirt's API absent: probe pods instead
        found_in = sorted({key_of(item)[0] for item in found if key_of(item)[0]})
        namespaces = usable_namespaces(found_in, self.writer.add_missing)
        return namespaces[0] if namespaces else None

    def _probe_controller_pods(self) -> str | None:
        for namespace in KUBEVIRT_NAMESPACES:
            query = (("labelSelector", CONTROLLER_SELECTOR),)
            try:
                pods = self.reader.list_items(RESOURCES[POD].path(namespace), query).items
            except _FAILURES:
                continue
            if pods:
                return namespace
        return None

    def _scoped_objects(self) -> None:
        """VMs, VMIs, VMIMs, launcher pods, VM start revisions, and the pools, replica sets,
        snapshots, snapshot contents and restores of the scope."""
        select = self.selection
        jobs = [
            *self._jobs(VM, select.vm, self.vm_query, by_name=True),
            *self._jobs(VMI, select.vmi, by_name=True),
            *self._jobs(VMIM, select.migration),
            *self._jobs(POD, select.launcher, (("labelSelector", LAUNCHER_SELECTOR),)),
            *self._jobs(REVISION, None),
            *(job for kind in sorted(OPTIONAL_KINDS) for job in self._jobs(kind, None)),
        ]
        self._run_jobs(jobs)
        keep_of_scope(self.objects, select)

    def _jobs(
        self,
        kind: str,
        keep: Callable[[Item], bool] | None,
        query: Query = (),
        by_name: bool = False,
    ) -> list[Job]:
        """One list per namespace (or one cluster-wide); one per VM when ``--vm`` names it."""
        if by_name and self.selection.vms:
            return [
                (kind, ns, (*query, ("fieldSelector", f"metadata.name={name}")), keep)
                for ns, name in sorted(self.selection.vms)
            ]
        namespaces: list[str | None] = list(self.namespaces) if self.namespaces else [None]
        return [(kind, ns, query, keep) for ns in namespaces]

    def _install_objects(self) -> None:
        """virt-controller pods, its Lease, and the pre-v1.3 Endpoints lock if present."""
        namespace = self.kubevirt_namespace
        if namespace is None:
            return
        self._run_jobs([(POD, namespace, (("labelSelector", CONTROLLER_SELECTOR),), None)])
        lease = self._get(LEASE, namespace, LOCK_NAME)
        if lease is not None:
            self._add(LEASE, [lease])
        elif LEASE in self.read_kinds:
            reason = f"{LOCK_NAME}: not found (no leader election in {namespace}?)"
            self.writer.add_missing(reason, kind=LEASE, namespace=namespace)
        lock = self._get(ENDPOINTS, namespace, LOCK_NAME)
        self._add(ENDPOINTS, [lock] if lock is not None and is_leader_lock(lock) else [])

    def _events(self) -> None:
        keep = event_filter(self.objects, self.selection, self.kubevirt_namespace)
        namespaces: list[str | None] = list(self.namespaces) if self.namespaces else [None]
        if self.namespaces and self.kubevirt_namespace not in (None, *self.namespaces):
            namespaces.append(self.kubevirt_namespace)
        self._run_jobs([(EVENT, ns, (), keep) for ns in namespaces])

    def _nodes(self) -> None:
        launchers = [p for p in self.objects.get(POD, []) if self.selection.launcher(p)]
        names = usable_nodes(
            node_names(self.objects.get(VMI, []), launchers), self.writer.add_missing
        )
        if not names:
            self.read_kinds.add(NODE)
        found = bounded_map(lambda name: self._get(NODE, None, name), names, WORKERS)
        for name, node in zip(names, found, strict=True):
            if node is not None:
                self._add(NODE, [node])
            elif NODE in self.read_kinds:
                self.writer.add_missing(f"{name}: not found (deleted since?)", kind=NODE)

    def _write_objects(self) -> None:
        for kind in KIND_ORDER:
            if kind in self.read_kinds:
                resource = RESOURCES[kind]
                items = sorted(self.objects.get(kind, []), key=_sort_key)
                self.writer.write_objects(kind, resource.plural, resource.api_version, items)

    def _logs(self) -> None:
        namespace = self.kubevirt_namespace
        pods = [p for p in self.objects.get(POD, []) if key_of(p)[0] == namespace]
        targets = [
            (key_of(pod)[1], container, instance)
            for pod in pods
            if (pod.get("metadata") or {}).get("labels", {}).get("kubevirt.io") == "virt-controller"
            for container, instance in log_targets(pod)
        ]
        if namespace is None or not targets:
            return
        targets = usable_log_targets(namespace, targets, self.writer.add_missing)
        bounded_map(lambda target: self._log(namespace, *target), targets, WORKERS)

    def _log(self, namespace: str, pod: str, container: str, instance: str) -> None:
        """Stream one container log to disk with kubelet timestamps (docs/bundle-format.md)."""
        if self.reader.cancelled.is_set():
            return  # never recreate directories in a bundle being removed
        try:  # the names were screened; these are the last lines of defence
            relative = self.writer.log_path(namespace, pod, container, instance)
            path = f"{RESOURCES[POD].path(namespace, pod)}/log"
        except UnsafeResponse as exc:
            self.writer.add_missing(str(exc), kind=POD, namespace=namespace)
            return
        query: list[tuple[str, str]] = [("container", container), ("timestamps", "true")]
        if instance == "previous":
            query.append(("previous", "true"))
        target = self.writer.root / relative
        try:
            streamed = self.reader.stream_to(
                path, [*query, *self.since], target, self.progress.add_bytes
            )
        except _FAILURES as exc:
            target.unlink(missing_ok=True)
            self.writer.add_missing(failure_reason(exc, POD, "log"), file=relative)
            return
        if streamed.truncated:
            self.writer.add_missing(truncation(streamed.size), file=relative)
        self.writer.add_log(namespace, pod, container, instance, relative, streamed.size)

    def _header(self, captured: datetime, server_version: str | None) -> dict[str, Any]:
        return {
            "capturedAt": captured.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "kvtraceVersion": __version__,
            "serverVersion": server_version,
            "kubevirtVersion": _kubevirt_version(self.objects.get(KUBEVIRT, [])),
            "kubevirtNamespace": self.kubevirt_namespace,
            "scope": {
                "allNamespaces": self.namespaces is None,
                "namespaces": self.namespaces or [],
                "vms": [f"{ns}/{name}" for ns, name in sorted(self.selection.vms)],
            },
        }


def _identity(item: Item) -> tuple[str, ...]:
    metadata = item.get("metadata") or {}
    return (str(metadata.get("uid") or ""), *key_of(item))


def _sort_key(item: Item) -> tuple[str, str]:
    return key_of(item)


def _kubevirt_version(kubevirts: list[Item]) -> str | None:
    """``status.observedKubeVirtVersion`` of the KubeVirt CR (docs/bundle-format.md)."""
    for kubevirt in kubevirts:
        status = kubevirt.get("status")
        version = status.get("observedKubeVirtVersion") if isinstance(status, dict) else None
        if isinstance(version, str) and version:
            return version
    return None
