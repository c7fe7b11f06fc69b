"""Peak RSS of ``kvtrace collect`` while it streams a 200 MiB virt-controller log.

The test API server (tests/apiserver) serves sample-logs/always-restart, with one controller
pod's ``current.log`` replaced by a generated file of ``--mib`` MiB (kubelet-prefixed JSON
lines). ``kvtrace collect`` runs as a child process, so its peak RSS (``ru_maxrss`` of the
children) is measured alone, without the server. The log must be streamed to disk: the peak
should stay under 100 MiB whatever the log size.

    python bench/collect_rss.py [--mib 200] [--archive]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.apiserver import ApiServer  # noqa: E402

SAMPLE = ROOT / "sample-logs" / "always-restart"
POD_LOG = "logs/kubevirt/virt-controller-6f8b9c7d54-4s9c4/virt-controller/current.log"
LIMIT_MIB = 100
LINE = (
    '2026-11-28T00:42:31.912345678Z {{"component":"virt-controller","kind":"VirtualMachine",'
    '"level":"info","msg":"Started VM by creating the new virtual machine instance testvm-{n}",'
    '"name":"testvm","namespace":"default","pos":"vm.go:1341","timestamp":'
    '"2026-11-28T00:42:31.912345Z","uid":"b5861adf-a1ce-473a-b0b6-b37c7442c6db"}}\n'
)


def make_bundle(directory: Path, mib: int) -> Path:
    """A copy of the sample whose first controller log is ``mib`` MiB."""
    bundle = directory / "source"
    shutil.copytree(SAMPLE, bundle)
    block = "".join(LINE.format(n=n) for n in range(4096)).encode()
    target = mib * 1024 * 1024
    with (bundle / POD_LOG).open("wb") as out:
        written = 0
        while written < target:
            piece = block[: target - written]
            out.write(piece)
            written += len(piece)
    return bundle


def collect(server: ApiServer, destination: Path) -> tuple[int, float, float]:
    """Run ``kvtrace collect`` as a child; (exit code, seconds, peak RSS MiB of the child)."""
    command = [
        sys.executable,
        "-m",
        "kvtrace",
        "collect",
        "-q",
        "--kubeconfig",
        str(server.kubeconfig),
        "-f",
        str(destination),
    ]
    started = time.monotonic()
    code = subprocess.run(command, cwd=ROOT, check=False).returncode
    elapsed = time.monotonic() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return code, elapsed, peak_kib / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=200, help="size of the generated log")
    parser.add_argument("--archive", action="store_true", help="write a .tar.gz, not a directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kvtrace-bench-") as scratch:
        work = Path(scratch)
        bundle = make_bundle(work, args.mib)
        (work / "server").mkdir()
        with ApiServer(bundle, work / "server", max_lifetime=1800) as server:
            target = work / ("out.tar.gz" if args.archive else "out")
            code, seconds, peak = collect(server, target)
        copied = target / POD_LOG
        size = copied.stat().st_size if copied.exists() else target.stat().st_size
        print(
            f"collect of a {args.mib} MiB log ({'archive' if args.archive else 'directory'}): "
            f"exit {code}, {seconds:.1f} s, {size / 2**20:.0f} MiB written, "
            f"peak RSS {peak:.1f} MiB (limit {LIMIT_MIB} MiB)"
        )
    return 0 if code == 0 and peak < LIMIT_MIB else 1


if __name__ == "__main__":
    sys.exit(main())
