"""Which releases each rule holds for, and judging an assessment against the evidence's release.

The rules are written from v1.9.0's code. A rule is applied to evidence of release R only when
R's code guarantees the same behaviour; the functions each rule rests on were compared at every
minor tag from v0.53.0 to v1.9.0 (and at the patch tags where a change landed):

- unchanged since v0.53.0 but for renames: the backoff (``calculateStartBackoffTime``,
  ``startFailureBackoffTimeLeft``, ``syncStartFailureStatus``, ``vmiFailedEarly``,
  ``shouldClearStartFailure``), the start and stop requests (``hasStartRequest``,
  ``hasStopRequestForVMI``), the revision name (``getVMRevisionName``), the firmware UUID
  (``setupStableFirmwareUUID``, the same uuid5 namespace), the work queue (``Execute`` and
  ``DefaultControllerRateLimiter``), the phase timestamps (``SetVMIPhaseTransitionTimestamp``),
  the deletionTimestamp guard of ``stopVMI``, the VM-controller and foreground finalizers, the
  node-name hand-over and the leader election timings (15 s lease, 10 s renew deadline);
- the migration guards the KV-MG rules read (``canMigrateVMI``, ``VMIActivePodsCount`` before a
  target pod, the ``kubevirt.io/migrationJobUID`` target-pod label) exist at every minor tag;
  VMIM ``phaseTransitionTimestamps`` are written from v0.55.0, so before it KV-MG-01 has no
  evidence to judge;
- the Always, Manual, Halted and Once branches of ``startStop`` (v0.53–v1.2, vm.go:729 at
  v1.0.0) and ``syncRunStrategy`` (v1.3+) decide alike; v1.7.0 only added the decentralized
  migration branch and WaitAsReceiver, which print their own texts.

What changed, and the rules that follow it, is :data:`CHANGES`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kvtrace.model.verdicts import UNVERIFIABLE, VIOLATION, Verdict
from kvtrace.model.version import VersionInfo, parse

Release = tuple[int, int, int]
FIRST = "v0.53.0"  # the oldest release of the call-site catalog


def _release(name: str) -> Release:
    found = parse(name)
    assert found is not None, name  # the spans below name releases of the catalog
    return found


@dataclass(frozen=True)
class Span:
    """The releases whose code guarantees a rule: ``first`` up to (not including) ``before``."""

    first: str = FIRST
    before: str | None = None
    differs: str = ""  # what the code does outside the span, with its source position

    @property
    def floor(self) -> Release:
        return _release(self.first)

    def holds(self, release: Release) -> bool:
        return self.floor <= release and (self.before is None or release < _release(self.before))

    @property
    def shown(self) -> str:
        return f"{self.first}–{self.before} (exclusive)" if self.before else f"{self.first} on"


RERUN_BEFORE_V1_2 = (
    "before v1.2.0 RerunOnFailure left a Succeeded VMI in place, stopped only a Failed one or on "
    "a stop request, and started a missing VMI with no start request (vm.go:783-820 at v1.0.0; "
    "commit 0bb5394702 changed it for v1.2.0, vm.go:946 and vm.go:966 at v1.2.0)"
)
SPANS: dict[str, Span] = {
    "KV-RS-02": Span("v1.2.0", differs=RERUN_BEFORE_V1_2),
    "KV-RS-03": Span("v1.2.0", differs=RERUN_BEFORE_V1_2),
    "KV-RS-06": Span(FIRST, "v1.2.0", differs="from v1.2.0 KV-RS-02 and KV-RS-03 apply"),
    "KV-SV-04": Span(
        "v1.0.0",
        differs="before v1.0.0 startVMI wrote no kubevirt.io/vm-generation annotation "
        "(added by commit d8e0880e80; vm.go:974 at v1.0.0)",
    ),
}
ALWAYS = Span()


@dataclass(frozen=True)
class Change:
    release: str
    what: str
    where: str
    rules: str


CHANGES: tuple[Change, ...] = (
    Change(
        "v0.53.0",
        "oldest release modelled; the leader lock is an Endpoints object",
        "leaderelectionconfig/config.go:42",
        "all rules but KV-RS-02, KV-RS-03, KV-SV-04",
    ),
    Change(
        "v1.0.0",
        "startVMI writes the kubevirt.io/vm-generation annotation; the lock is EndpointsLeases",
        "vm.go:974, leaderelectionconfig/config.go:42",
        "KV-SV-04 applies",
    ),
    Change(
        "v1.2.0",
        "RerunOnFailure deletes a Succeeded VMI too, appends a start request after a failure "
        "and starts only on a start request",
        "vm.go:946, vm.go:956, vm.go:966",
        "KV-RS-02, KV-RS-03 replace KV-RS-06",
    ),
    Change(
        "v1.3.0",
        "the leader lock is a Lease; stopVMI can return after the delete without its "
        "'Dispatching delete event' line when the restart-required cleanup fails (until v1.6.x)",
        "leaderelectionconfig/config.go:42, vm.go:1604-1608 at v1.3.0",
        "none: no rule reads a missing delete line as no delete",
    ),
    Change(
        "v1.6.0",
        "expectations log through KubeVirt's logger (JSON) instead of glog",
        "expectations.go:123 at v1.6.0",
        "none",
    ),
    Change(
        "v1.7.0",
        "the decentralized migration branch of Always and the WaitAsReceiver strategy; the "
        "restart-required cleanup no longer fails",
        "vm.go:990, vm.go:1167, vm.go:1682 at v1.9.0",
        "none",
    ),
)


def span_of(rule: str) -> Span:
    return SPANS.get(rule, ALWAYS)


def candidates(version: VersionInfo) -> tuple[Release, ...]:
    """The releases the evidence may be: the stated one, else the log lines' band."""
    stated = parse(version.version)
    if stated is not None:
        return (stated,)
    return tuple(r for r in map(parse, version.band_releases) if r is not None)


def applies(rule: str, releases: tuple[Release, ...]) -> bool:
    """Whether ``rule`` is run at all: some candidate release's code guarantees it (or the
    release is unknown, and the verdicts say so)."""
    span = span_of(rule)
    return not releases or any(span.holds(r) for r in releases)


def not_applied(rules: set[str], version: VersionInfo) -> list[str]:
    """A note for each of ``rules`` that holds for none of the evidence's releases because they
    predate it (a rule for older code left out of newer evidence needs no note)."""
    releases = candidates(version)
    return [
        f"{rule} not applied: it holds for {span.shown}, the evidence is KubeVirt "
        f"{version.shown}; {span.differs}"
        for rule, span in sorted((r, span_of(r)) for r in rules)
        if releases and max(releases) < span.floor
    ]


def judge(verdicts: list[Verdict], version: VersionInfo) -> list[Verdict]:
    """The verdicts of the rules that apply (:func:`applies`), each labelled with the release it
    judges against; a rule that holds for some of the candidate releases only cannot raise a
    violation."""
    releases, label = candidates(version), against(version)
    return [
        _labelled(verdict, releases, label, version)
        for verdict in verdicts
        if applies(verdict.rule, releases)
    ]


def against(version: VersionInfo) -> str:
    """The release verdicts name as the one they judge against."""
    if candidates(version) or version.version:
        return version.shown
    return "v1.9.0 (the evidence's release is unknown)"


def _labelled(
    verdict: Verdict, releases: tuple[Release, ...], label: str, version: VersionInfo
) -> Verdict:
    span = span_of(verdict.rule)
    certain = all(span.holds(r) for r in releases) if releases else span is ALWAYS
    if certain or verdict.status != VIOLATION:
        return replace(verdict, release=label)
    if releases:
        doubt = f"and the evidence may be an earlier or later release ({version.shown}): "
        doubt += span.differs
    else:
        doubt = "only and the release is unknown (--kubevirt-version decides)"
    why = f"{verdict.why}; not a violation here: {verdict.rule} holds for {span.shown} {doubt}"
    return replace(verdict, status=UNVERIFIABLE, why=why, release=label)
