"""kvsim: a simulator of KubeVirt v1.9.0's virt-controller, the one home of synthetic evidence.

It runs the VM and VMI controllers, their work queues, informers and expectations, leader
election and the parts of the cluster they talk to (the API server with its admission webhooks,
the launcher pods, virt-handler) as a discrete-event simulation, driven by user and cluster
actions. The migration, evacuation and node controllers run on every leader; a cluster built
with ``live_migration=True`` also has virt-handler's migration side and heartbeats, a scheduler
that reads the nodes, drains (kvsim.migration_histories); ``pools=True`` adds the
VirtualMachinePool and VMIRS controllers, ``snapshots=True`` the snapshot and restore
controllers with virt-handler's freeze side (kvsim.pool_histories). It writes what a cluster
would show at capture time: every replica's log exactly as v1.9.0 prints it, and the objects as
the API returns them.

It is written from the KubeVirt v1.9.0 source (tag v1.9.0 = 79d34c17), never from kvtrace's
rules: its job is to be able to prove a rule wrong. It imports nothing from kvtrace.
"""
