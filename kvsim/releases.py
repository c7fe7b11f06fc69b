"""Where another release prints each call site kvsim imitates: kvsim's controllers are v1.9.0's
and cite v1.9.0 positions; a log "as release R printed it" puts each line at R's position of the
same call site (same file, level and format), from the call-site catalog that tools/callsites.py
generates from each tag (``kvtrace/timeline/callsites.json``, read here as data).

Where R's code behaves otherwise in what kvsim simulates, kvsim follows R (each checked in R's
source): before v1.2.0 RerunOnFailure left a Succeeded VMI in place, stopped only a Failed one
or on a stop request, and started with no start request (vm.go:783-820 at v1.0.0); before v1.0.0
startVMI wrote no ``kubevirt.io/vm-generation`` annotation (vm.go:974 at v1.0.0); before v0.59.0
the VM had no finalizer (added at vm.go:2264 at v0.59.0), so sync ignored a VM being deleted
(vm.go:2182 at v0.58.0), the VM went at once and the garbage collector deleted its VMI; the
leader lock is an Endpoints object before v1.0.0, EndpointsLeases (both, kvsim.locks) to v1.2.x,
then a Lease (leaderelectionconfig/config.go:42); a start-up line whose call site R
lacks (a controller R does not have, such as backup before v1.8.0) is not printed.

What kvsim cannot write as R did raises :class:`ReleaseGap` rather than invent it: a call site
kvsim prints that R does not have (a message added, removed or reworded since), and verbosity 4
before v1.6.0 (expectations logged through glog, with other texts). Left as v1.9.0's: the informer
names of the start-up lines, the launcher pod (its overhead is verify-overhead's per-release
business), and the untyped ``listening`` line (not in the call-site catalog, so not printed for
other releases).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SIMULATED = "v1.9.0"
CATALOG = Path(__file__).resolve().parent.parent / "kvtrace" / "timeline" / "callsites.json"


class ReleaseGap(Exception):
    """A call site kvsim prints has no counterpart in the chosen release."""


@lru_cache(maxsize=64)
def positions(release: str) -> dict[str, str]:
    """``file:line`` at v1.9.0 → ``file:line`` at ``release``, for every call site both have."""
    data = json.loads(CATALOG.read_text(encoding="utf-8"))
    if release not in data["releases"]:
        raise ReleaseGap(f"{release} is not a release of the call-site catalog")
    found: dict[str, str] = {}
    for site in data["sites"]:
        here, there = site["positions"].get(SIMULATED), site["positions"].get(release)
        if here is not None and there is not None:
            found[f"{site['file']}:{here}"] = f"{site['file']}:{there}"
    return found


def printed_at(pos: str, release: str) -> str:
    """Where ``release`` prints the call site v1.9.0 prints at ``pos``."""
    if release == SIMULATED:
        return pos
    moved = positions(release).get(pos)
    if moved is None:
        raise ReleaseGap(f"{release} has no call site like v1.9.0's {pos}")
    return moved


def version(release: str) -> tuple[int, int, int]:
    major, minor, patch = release.lstrip("v").split(".")[:3]
    return int(major), int(minor), int(patch)


def at_least(release: str, floor: str) -> bool:
    return version(release) >= version(floor)


def has(pos: str, release: str) -> bool:
    """Whether ``release`` has the call site v1.9.0 prints at ``pos``."""
    return release == SIMULATED or pos in positions(release)


def check_simulable(release: str, verbosity: int) -> None:
    positions(release)  # a release of the catalog
    if verbosity >= 4 and not at_least(release, "v1.6.0"):
        raise ReleaseGap(
            f"{release}: before v1.6.0 expectations logged through glog with other texts; "
            "kvsim simulates verbosity 4 from v1.6.0"
        )


def lock_kind(release: str) -> str:
    """The leader lock (leaderelectionconfig/config.go:42): Endpoints before v1.0.0, both
    (EndpointsLeases) to v1.2.x, then the Lease."""
    if at_least(release, "v1.3.0"):
        return "Lease"
    return "EndpointsLeases" if at_least(release, "v1.0.0") else "Endpoints"
