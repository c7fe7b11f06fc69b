"""The VirtualMachineSnapshotContent half of the snapshot controller of v1.9.0
(``updateVMSnapshotContent``, pkg/storage/snapshot/snapshot.go:339-515, and the freeze of
source.go:437-487), run by :class:`kvsim.snapshots.SnapshotController`.

Before its first VolumeSnapshot the content's reconcile **freezes** a running VMI whose guest
agent is connected, through the VMI ``freeze`` subresource, and prints ``Freezing vmi %s took
%s`` (util.go:44, printed even when the call fails; then ``Failed freezing vm %s: %v``,
source.go:463, and a retry in 5 s); a running VMI without an agent gets the Warning ``Guest
agent does not exist and VM %s is running. Snapshoting without freezing FS. This can result in
inconsistent snapshot!`` (source.go:452). Then one VolumeSnapshot per PVC volume,
``vmsnapshot-<snapshot uid>-volume-<volume>``: ``Attempting to create VolumeSnapshot %s``
(snapshot.go:535), Event ``SuccessfulVolumeSnapshotCreate`` ``Successfully created
VolumeSnapshot %s`` on the content (snapshot.go:583). Once every VolumeSnapshot has a
``creationTime``: **unfreeze** (``Unfreezing vmi %s took %s``, util.go:44, deferred) and the
content's ``creationTime``.
"""

from __future__ import annotations

from typing import Any

from kvsim import timefmt
from kvsim.apiserver import ApiError, Obj, clone
from kvsim.events import Recorder
from kvsim.guest_agent import connected, go_duration
from kvsim.informer import Informers
from kvsim.kernel import SECOND
from kvsim.runtime import Runtime
from kvsim.vm_controller import VMI, Step

SNAPSHOT, CONTENT = "VirtualMachineSnapshot", "VirtualMachineSnapshotContent"
VOLUME_SNAPSHOT = "VolumeSnapshot"
SNAPSHOT_API = "snapshot.kubevirt.io/v1beta1"
RETRY_US = 5 * SECOND  # snapshotRetryInterval, snapshot.go:68


class ContentSync:
    rt: Runtime
    cache: Informers
    recorder: Recorder

    def _call(self, kind: str, verb: str, operation: Any) -> Step:
        raise NotImplementedError

    def _say(self, level: str, msg: str, pos: str) -> None:
        raise NotImplementedError

    # --- updateVMSnapshotContent (snapshot.go:339-515) ---------------------------------------
    def _update_content(self, namespace: str, name: str) -> Step:
        content = self.cache.get(CONTENT, namespace, name)
        if content is None:
            return 0
        snapshot = self.cache.get(
            SNAPSHOT, namespace, content["spec"]["virtualMachineSnapshotName"]
        )
        status = clone(content.get("status") or {})
        statuses, froze = [], False
        for backup in content["spec"].get("volumeBackups") or []:
            vs_name = backup["volumeSnapshotName"]
            vs = self.cache.get(VOLUME_SNAPSHOT, namespace, vs_name)
            if vs is None:
                if snapshot is None:
                    continue
                if not froze:
                    if not (yield from self._freeze(snapshot)):
                        return RETRY_US
                    froze = True
                vs = yield from self._create_volume_snapshot(content, backup)
            vs_status = vs.get("status") or {}
            statuses.append(
                {
                    "volumeSnapshotName": vs_name,
                    **{k: vs_status[k] for k in ("creationTime", "readyToUse") if k in vs_status},
                }
            )
        created = all(s.get("creationTime") for s in statuses)
        if created and not status.get("creationTime") and snapshot is not None:
            status["creationTime"] = timefmt.seconds(self.rt.kernel.now)
            yield from self._unfreeze(snapshot)
        status["readyToUse"] = all(s.get("readyToUse") for s in statuses)
        status["volumeSnapshotStatus"] = statuses
        if status != content.get("status"):
            changed = clone(content)
            changed["status"] = status
            yield from self._call(CONTENT, "update", lambda: self.rt.api.update(changed, "status"))
        return 0

    def _source_vmi(self, snapshot: Obj) -> Obj | None:
        return self.cache.get(
            VMI, snapshot["metadata"]["namespace"], snapshot["spec"]["source"]["name"]
        )

    def _freeze(self, snapshot: Obj) -> Step:
        """Freeze (source.go:437-469): True when the volumes may be snapshotted."""
        vmi = self._source_vmi(snapshot)
        vm_name = snapshot["spec"]["source"]["name"]
        if vmi is None:
            return True
        if not connected(vmi):
            msg = (
                f"Guest agent does not exist and VM {vm_name} is running. Snapshoting without "
                "freezing FS. This can result in inconsistent snapshot!"
            )
            self._say("warning", msg, "source.go:452")
            return True
        err = yield from self._subresource("freeze", vmi, f"Freezing vmi {vm_name}")
        if err is not None:
            self._say("error", f"Failed freezing vm {vm_name}: {err}", "source.go:463")
            return False
        return True

    def _unfreeze(self, snapshot: Obj) -> Step:
        """Unfreeze (source.go:471-487)."""
        vmi = self._source_vmi(snapshot)
        if vmi is None or not connected(vmi):
            return None
        vm_name = snapshot["spec"]["source"]["name"]
        err = yield from self._subresource("unfreeze", vmi, f"Unfreezing vmi {vm_name}")
        if err is not None:
            self._say("error", f"Failed unfreezing vm {vm_name}: {err}", "source.go:481")
            raise ApiError(500, "InternalError", err)
        return None

    def _subresource(self, verb: str, vmi: Obj, what: str) -> Step:
        """The VMI subresource call, timed by timeTrack (util.go:42-45)."""
        rt, meta = self.rt, vmi["metadata"]
        start, err = rt.kernel.now, None
        try:
            yield from self._call(
                VMI, verb, lambda: rt.api.subresource(VMI, verb, meta["namespace"], meta["name"])
            )
            yield rt.rng.randint(15_000, 400_000)  # the guest agent's fsfreeze behind the call
        except ApiError as exc:
            err = str(exc)
        elapsed = (rt.kernel.now - start) * 1000 + rt.rng.randint(0, 999)
        self._say("info", f"{what} took {go_duration(elapsed)}", "util.go:44")
        return err

    def _create_volume_snapshot(self, content: Obj, backup: Obj) -> Step:
        """createVolumeSnapshot (snapshot.go:531-592)."""
        name = backup["volumeSnapshotName"]
        source = content["spec"]["source"]["virtualMachine"]["metadata"]
        self._say("info", f"Attempting to create VolumeSnapshot {name}", "snapshot.go:535")
        vs = {
            "apiVersion": "snapshot.storage.k8s.io/v1",
            "kind": VOLUME_SNAPSHOT,
            "metadata": {
                "labels": {
                    "snapshot.kubevirt.io/source-vm-name": source["name"],
                    "snapshot.kubevirt.io/source-vm-namespace": source["namespace"],
                },
                "name": name,
                "namespace": content["metadata"]["namespace"],
                "ownerReferences": [
                    {
                        "apiVersion": SNAPSHOT_API,
                        "blockOwnerDeletion": True,
                        "controller": True,
                        "kind": CONTENT,
                        "name": content["metadata"]["name"],
                        "uid": content["metadata"]["uid"],
                    }
                ],
            },
            "spec": {
                "source": {
                    "persistentVolumeClaimName": backup["persistentVolumeClaim"]["metadata"]["name"]
                }
            },
        }
        created = yield from self._call(VOLUME_SNAPSHOT, "create", lambda: self.rt.api.create(vs))
        message = f"Successfully created VolumeSnapshot {name}"
        self.recorder.event(content, "Normal", "SuccessfulVolumeSnapshotCreate", message)
        return created
