#!/usr/bin/env python3
"""Time kvtrace against grep and jq on the same generated log set.

    python3 bench/generate_log.py --size 1G        # once (bench/README.md: about 19 min)
    python3 bench/run.py                           # kvtrace --log …, grep -F, jq; best of 3
    python3 bench/run.py --bundle --repeat 5 --vm vm-04321

Each command runs ``--repeat`` times on a warm page cache (the files are read once before the
first timing); the table shows the best and median wall time and the peak RSS of each child
(``os.wait4`` → ``ru_maxrss``). The three commands:

1. ``kvtrace timeline <ns>/<vm> --log F1 --log F2 … -o json`` (or ``--bundle bench/out``)
2. ``grep -F <vm> F1 F2 …`` — a lower bound: raw substring search, no parsing. Its output goes
   to a temporary file, not /dev/null: GNU grep notices a /dev/null stdout and stops at the first
   match (like ``-q``), which would time nothing.
3. ``jq -cR '.[31:] | fromjson? | select(.name==VM or ((.msg // "")|contains(VM)))' F1 F2 …``
   — jq reads the raw kubelet-prefixed lines, cuts the fixed-width 31-character prefix
   (``2026-11-28T00:42:31.912345678Z ``, the kubelet's, as kvsim writes it) and parses every
   remaining line as JSON (klog lines fail ``fromjson?`` and are skipped). That is the "parse
   everything, then filter" baseline without a pre-processing pass that would not be timed.

kvtrace failures (e.g. a not-yet-supported option) are reported in the table, not raised.
Standard library only, besides the generator's ``namespace_of``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from workload import namespace_of

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


@dataclass
class Result:
    name: str
    argv: list[str]
    walls: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    error: str | None = None
    note: str = ""

    @property
    def best(self) -> float | None:
        return min(self.walls) if self.walls else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.walls) if self.walls else None

    @property
    def peak_mib(self) -> float | None:
        return max(self.rss_kib) / 1024 if self.rss_kib else None


GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def run_once(
    argv: list[str], stdout_path: str, env: dict[str, str] | None, ok_codes: tuple[int, ...]
) -> tuple[float, int, int, str]:
    """Run argv; return (wall seconds, exit code, peak RSS KiB, stderr tail).

    Peak RSS: the kernel carries the pre-exec address space's high-water mark into ru_maxrss,
    so a child spawned straight from this Python process reports at least Python's own RSS. With
    GNU time as a trampoline (``/usr/bin/time -f %M``) the measured process is forked from a
    ~2 MiB process instead, which makes small tools (grep, jq) measurable; without it the
    os.wait4 value is used and ``floor_kib()`` tells how much of it is inherited.
    """
    err_path = stdout_path + ".stderr"
    rss_path = stdout_path + ".rss"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [
        (os.POSIX_SPAWN_OPEN, 1, stdout_path, flags, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, err_path, flags, 0o644),
    ]
    full = [GNU_TIME, "-f", "%M", "-o", rss_path, *argv] if GNU_TIME else argv
    t0 = time.perf_counter()
    pid = os.posix_spawnp(
        full[0], full, env if env is not None else os.environ, file_actions=actions
    )
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss
    if GNU_TIME:
        try:
            with open(rss_path, encoding="utf-8") as fh:
                rss = int(fh.read().split()[-1])  # "Command exited with non-zero status N\n<kib>"
        except (OSError, ValueError, IndexError):
            pass
        if os.path.exists(rss_path):
            os.unlink(rss_path)
    with open(err_path, "rb") as fh:
        tail = fh.read()[-4000:].decode("utf-8", "replace").strip()
    os.unlink(err_path)
    return wall, code, rss, tail if code not in ok_codes else ""


def floor_kib(tmp: str) -> int:
    """ru_maxrss of a trivial child (``true``): the inherited part of every measurement."""
    return run_once(["true"], os.path.join(tmp, "floor.out"), None, (0,))[2]


def kvtrace_argv(override: str | None) -> tuple[list[str], dict[str, str] | None]:
    if override:
        return shlex.split(override), None
    exe = shutil.which("kvtrace")
    if exe:
        return [exe], None
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    return [sys.executable, "-m", "kvtrace"], env


def printed(path: str) -> bool:
    """Whether a kvtrace command wrote anything to ``path`` (its stdout): one that printed
    nothing did not do the work (a wrong entry point, an import that failed quietly), and its
    time must not enter a table."""
    return os.path.isfile(path) and os.path.getsize(path) > 0


def log_files(out: Path) -> list[Path]:
    manifest = out / "manifest.json"
    if manifest.is_file():
        m = json.loads(manifest.read_text(encoding="utf-8"))
        return [out / e["file"] for e in m.get("logs", [])]
    return sorted(out.glob("logs/**/*.log"))


def compile_trees(*trees: Path) -> None:
    """Write the bytecode of each checkout's packages, as ``pip install`` does: with
    PYTHONDONTWRITEBYTECODE set (some machines and CI images set it) an editable checkout is
    otherwise compiled again by every run, which adds about 0.2 s to each command's start."""
    for tree in trees:
        for package in ("kvtrace", "parsers"):
            if (tree / package).is_dir():
                compileall.compile_dir(tree / package, quiet=1)


def warm(files: list[Path]) -> None:
    buf = bytearray(1 << 20)
    for f in files:
        with open(f, "rb", buffering=0) as fh:
            while fh.readinto(buf):
                pass


def fmt(v: float | None, spec: str) -> str:
    return format(v, spec) if v is not None else "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=HERE / "out", help="generated bundle (bench/out)")
    ap.add_argument("--vm", default="vm-01234", help="VM name to look for (default vm-01234)")
    ap.add_argument("--ns", help="VM namespace (default: the generator's namespace_of rule)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per command; best-of (default 3)")
    ap.add_argument(
        "--bundle",
        action="store_true",
        help="run kvtrace with --bundle OUT instead of one --log per file",
    )
    ap.add_argument(
        "--kvtrace",
        help="kvtrace command line (default: kvtrace on PATH, else "
        "'python -m kvtrace.cli' from this checkout)",
    )
    ap.add_argument("--keep-output", type=Path, help="write kvtrace's JSON of the last run here")
    ap.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["kvtrace", "grep", "jq"],
        help="leave a command out (repeatable)",
    )
    args = ap.parse_args()

    files = log_files(args.out)
    missing = [f for f in files if not f.is_file()]
    if not files or missing:
        print(
            f"no generated logs under {args.out} (missing: {[str(m) for m in missing][:3]}).\n"
            "Run: python3 bench/generate_log.py --size 64M   (or without --size for 256 MiB)",
            file=sys.stderr,
        )
        return 2
    vm = args.vm
    ns = args.ns
    if ns is None:
        try:
            ns = namespace_of(int(vm.rsplit("-", 1)[1]))
        except (IndexError, ValueError):
            ns = "default"
    total = sum(f.stat().st_size for f in files)
    fnames = [str(f) for f in files]

    kv, kv_env = kvtrace_argv(args.kvtrace)
    kv_src = (
        ["--bundle", str(args.out)] if args.bundle else [a for f in fnames for a in ("--log", f)]
    )
    results: list[tuple[Result, dict[str, str] | None, tuple[int, ...], bool]] = []
    if "kvtrace" not in args.skip:
        results.append(
            (
                Result("kvtrace", [*kv, "timeline", f"{ns}/{vm}", *kv_src, "-o", "json"]),
                kv_env,
                (0,),
                True,
            )
        )
    if "grep" not in args.skip:
        results.append((Result("grep -F", ["grep", "-F", vm, *fnames]), None, (0, 1), False))
    if "jq" not in args.skip:
        jq = shutil.which("jq")
        flt = f'.[31:] | fromjson? | select(.name=="{vm}" or ((.msg // "")|contains("{vm}")))'
        r = Result("jq", ["jq", "-cR", flt, *fnames])
        if jq is None:
            r.error = "jq not found: install it with `apt-get install -y jq` (or brew install jq)"
        results.append((r, None, (0,), False))

    print(
        f"log set: {len(files)} files, {total / (1 << 20):,.1f} MiB under {args.out}; "
        f"VM {ns}/{vm}; {args.repeat} run(s) each, warm cache",
        file=sys.stderr,
    )
    compile_trees(REPO)
    warm(files)
    with tempfile.TemporaryDirectory() as tmp:
        floor = floor_kib(tmp)
        kv_out = os.path.join(tmp, "kvtrace.json")
        for r, env, ok, capture in results:
            if r.error:
                continue
            print(
                f"  running {r.name}: {shlex.join(r.argv[:6])}{' …' if len(r.argv) > 6 else ''}",
                file=sys.stderr,
            )
            for _ in range(args.repeat):
                try:
                    dest = kv_out if capture else os.path.join(tmp, "other.out")
                    wall, code, rss, err = run_once(r.argv, dest, env, ok)
                except OSError as e:
                    r.error = f"cannot run: {e}"
                    break
                if code not in ok:
                    r.error = f"exit {code}: {err.splitlines()[-1] if err else '(no stderr)'}"
                    if err:
                        print(
                            f"    {r.name} failed (exit {code}):\n      "
                            + "\n      ".join(err.splitlines()[-8:]),
                            file=sys.stderr,
                        )
                    break
                r.walls.append(wall)
                r.rss_kib.append(rss)
            if capture and r.walls and os.path.exists(kv_out):
                try:
                    with open(kv_out, encoding="utf-8") as fh:
                        doc = json.load(fh)
                    items = doc.get("items") if isinstance(doc, dict) else None
                    r.note = f"{len(items)} rows" if isinstance(items, list) else ""
                except (OSError, ValueError) as e:
                    r.note = f"output not JSON ({e.__class__.__name__})"
                if args.keep_output:
                    shutil.copyfile(kv_out, args.keep_output)

    how = "GNU time -f %M" if GNU_TIME else "os.wait4 ru_maxrss"
    print(
        f"\npeak RSS via {how}; a trivial child measures {floor / 1024:.1f} MiB "
        "(values near that are mostly inherited)"
    )
    print(f"{'command':<10} {'best s':>9} {'median s':>9} {'MiB/s':>8} {'peak RSS MiB':>13}  note")
    for r, *_ in results:
        mbps = total / (1 << 20) / r.best if r.best else None
        note = r.error or r.note
        print(
            f"{r.name:<10} {fmt(r.best, '9.3f')} {fmt(r.median, '9.3f')} {fmt(mbps, '8.0f')} "
            f"{fmt(r.peak_mib, '13.1f')}  {note}"
        )
    by = {r.name: r for r, *_ in results}
    k = by.get("kvtrace")
    print()
    for other in ("grep -F", "jq"):
        o = by.get(other)
        if k and o and k.best and o.best:
            print(f"kvtrace / {other:<8} {k.best / o.best:6.2f}x  (wall, best of {args.repeat})")
        else:
            print(f"kvtrace / {other:<8}    n/a")
    if k and k.peak_mib is not None:
        print(f"kvtrace peak RSS   {k.peak_mib:.1f} MiB")
    return 0 if k is None or k.error is None else 1


if __name__ == "__main__":
    sys.exit(main())
