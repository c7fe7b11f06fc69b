"""The disruption budget controller of v1.9.0
(pkg/virt-controller/watch/drain/disruptionbudget/disruptionbudget.go), which every leader runs
with 3 workers (application.go:639).

In v1.9.0 it only removes PodDisruptionBudgets whose controller is a VMI: the PDBs an older
KubeVirt created for a VMI, or a tool re-applies. It is enqueued with the VMI's key by every VMI
event (disruptionbudget.go:137-175), by updates of pods a VMI controls (119-135) and by adds and
deletes of PDBs a VMI controls (177-280). ``execute`` (353-397) waits for its delete expectations,
lists the namespace's PDBs controlled by a VMI of that name (417-432) and deletes each
(``deletePDB``, 399-415), with an Event on the VMI (``SuccessfulDelete`` or ``FailedDelete``).

At default verbosity it prints one line: after a failed reconcile, the VMI controller's requeue
text from its own file, ``reenqueuing VirtualMachineInstance <key>`` at disruptionbudget.go:344
(``log.Log.Reason(err).Infof``: level info, the error as ``reason``, no object).

With no PDB in the cluster it makes no API call and prints nothing.
"""

from __future__ import annotations

from kvsim.apiserver import ApiError, Obj
from kvsim.events import Recorder
from kvsim.expectations import Expectations
from kvsim.informer import Informers
from kvsim.kernel import Process
from kvsim.runtime import Runtime
from kvsim.vm_controller import Step, controller_ref
from kvsim.vmi_controller import requeue_vmi
from kvsim.workqueue import WorkQueue, serve

PDB, VMI, POD = "PodDisruptionBudget", "VirtualMachineInstance", "Pod"
THREADS = 3  # application.go: disruptionBudgetControllerThreads, defaultControllerThreads
COMPONENT = "disruptionbudget-controller"  # application.go:855


def vmi_key_of(pdb: Obj) -> str | None:
    """resolveControllerRef (disruptionbudget.go:296-311): the key of the VMI controlling it."""
    ref = controller_ref(pdb)
    if ref is None or ref.get("kind") != VMI:
        return None
    return f"{pdb['metadata'].get('namespace', '')}/{ref['name']}"


def pdb_key(pdb: Obj) -> str:
    return f"{pdb['metadata'].get('namespace', '')}/{pdb['metadata']['name']}"


class DisruptionBudgetController:
    def __init__(self, rt: Runtime, seed: str) -> None:
        self.rt = rt
        self.queue = WorkQueue(rt.kernel)
        self.expectations = Expectations()  # podDisruptionBudgetExpectations, UID-tracking
        self.recorder = Recorder(rt.api, COMPONENT)
        # the PDB informer (application.go:399), fed by its own watch on the server
        self.pdbs = Informers(rt.api, rt.host, f"{seed}/pdb", kinds=(PDB,))
        self.pdbs.extra_lag_us = rt.informers.extra_lag_us
        rt.informers.on(VMI, self._vmi_event)
        rt.informers.on(POD, self._pod_event)
        self.pdbs.on(PDB, self._pdb_event)

    def run(self) -> Process:
        """Run (disruptionbudget.go:313-328): wait for the caches, start the workers."""
        rt = self.rt
        rt.kernel.spawn(rt.host, self.pdbs.start())
        yield rt.informers.synced
        yield self.pdbs.synced
        for _ in range(THREADS):
            rt.kernel.spawn(rt.host, serve(self.queue, self._execute_key))

    def _execute_key(self, key: str) -> Process:
        """Execute (disruptionbudget.go:335-351): its requeue prints the VMI controller's text."""
        err = yield from self._execute(key)
        requeue_vmi(self.rt, self.queue, key, err, "disruptionbudget.go:344")

    # --- event handlers --------------------------------------------------------------------
    def _vmi_event(self, old: Obj | None, new: Obj | None) -> None:
        vmi = new or old
        assert vmi is not None
        self.queue.add(f"{vmi['metadata'].get('namespace', '')}/{vmi['metadata']['name']}")

    def _pod_event(self, old: Obj | None, new: Obj | None) -> None:
        """updatePod: only updates, of live pods a VMI controls."""
        if old is None or new is None or new["metadata"].get("deletionTimestamp"):
            return
        key = vmi_key_of(new)
        if key is not None:
            self.queue.add(key)

    def _pdb_event(self, old: Obj | None, new: Obj | None) -> None:
        """add (177-199), update (204-241) and delete (245-280) of a PDB: a terminating or
        removed PDB is a deletion observed; any other enqueues its VMI."""
        pdb = new or old
        assert pdb is not None
        key = vmi_key_of(pdb)
        if key is None:
            return
        if new is None or new["metadata"].get("deletionTimestamp"):
            self.expectations.deletion_observed(key, pdb_key(pdb))
        self.queue.add(key)

    # --- one reconcile ---------------------------------------------------------------------
    def _execute(self, key: str) -> Step:
        rt = self.rt
        if not self.expectations.satisfied(key, rt.kernel.now):
            return None
        namespace, name = key.split("/", 1)
        vmi = rt.informers.get(VMI, namespace, name)
        if vmi is None:  # libvmi.New(name, namespace): no uid
            vmi = {"kind": VMI, "metadata": {"name": name, "namespace": namespace, "uid": ""}}
        err: str | None = None
        for pdb in self._pdbs_for(vmi):
            failed = yield from self._delete_pdb(key, pdb, vmi)
            err = failed or err
        return err

    def _pdbs_for(self, vmi: Obj) -> list[Obj]:
        """pdbsForVMI (417-432): the namespace's PDBs whose controller is a VMI of this name."""
        meta = vmi["metadata"]

        def controlled(pdb: Obj) -> bool:
            ref = controller_ref(pdb)
            return (
                pdb["metadata"].get("namespace") == meta["namespace"]
                and ref is not None
                and ref.get("kind") == VMI
                and ref.get("name") == meta["name"]
            )

        return self.pdbs.list(PDB, controlled)

    def _delete_pdb(self, key: str, pdb: Obj, vmi: Obj) -> Step:
        """deletePDB (399-415)."""
        if pdb["metadata"].get("deletionTimestamp"):
            return None
        rt, name = self.rt, pdb["metadata"]["name"]
        namespace = pdb["metadata"]["namespace"]
        self.expectations.expect_deletions(key, [pdb_key(pdb)], rt.kernel.now)
        try:
            yield from rt.api.call(
                rt.host, PDB, "delete", lambda: rt.api.delete(PDB, namespace, name)
            )
        except ApiError as exc:
            self.expectations.deletion_observed(key, pdb_key(pdb))
            message = f"Error deleting the PodDisruptionBudget {name}: {exc}"
            self.recorder.event(vmi, "Warning", "FailedDelete", message)
            return str(exc)
        message = f"Deleted PodDisruptionBudget {name}"
        self.recorder.event(vmi, "Normal", "SuccessfulDelete", message)
        return None
