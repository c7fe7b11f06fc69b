"""The fast line reader gives, line for line, what the full parser gives: the same records (every
field, provenance included) and the same tally, on every shipped sample, on the simulator's logs
(kubelet-prefixed, bare, CRI-wrapped) and on hostile lines mixed in any order."""

from __future__ import annotations

import random
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvsim.histories import legitimate, with_fault
from parsers.fastline import FastLogParser
from parsers.logstream import LogParser
from parsers.records import SourceInfo

SAMPLES = Path(__file__).resolve().parent.parent / "sample-logs"
SAMPLE_LOGS = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in (".log", ""))
KLOG = re.compile(rb"(?:\S+Z )?[IWEF]\d{4} ")
ANCHOR = datetime(2026, 11, 28, tzinfo=timezone.utc)
SOURCE = SourceInfo("virt-controller.log", pod="virt-controller-7c9d5b6f4-h2xqm")
OBJECT = (
    b'{"component":"virt-controller","kind":"","level":"info","msg":"Started VM by creating the '
    b'new virtual machine instance web-x7","name":"web","namespace":"default","pos":"vm.go:1341",'
    b'"timestamp":"2026-11-28T00:42:31.912345Z","uid":"b5861adf-a1ce-473a-b0b6-b37c7442c6db"}'
)
PREFIX = b"2026-11-28T00:42:31.912399871Z "
HOSTILE = [
    OBJECT,
    PREFIX + OBJECT,
    b"2026-11-28T00:42:31.9124Z stderr F " + OBJECT,
    b"2026-11-28T00:42:31.9124Z stdout F " + OBJECT,
    b"2026-11-28T00:42:31.9124+01:00 stderr F:tag " + OBJECT,
    b'2026-11-28T00:42:31.9124Z stderr P {"level":"error","msg":"part one ',
    b'2026-11-28T00:42:31.9125Z stderr F part two","timestamp":"2026-11-28T00:42:31.9Z"}',
    PREFIX + OBJECT + b"\r\n",
    PREFIX + OBJECT + b" ",
    b"\xef\xbb\xbf" + OBJECT,
    b"\x1b[32m" + PREFIX + OBJECT + b"\x1b[0m",
    PREFIX + OBJECT.replace(b"web-x7", b"web-\xff"),
    PREFIX + OBJECT.replace(b"web-x7", "wéb-✓".encode()),
    b"`" + OBJECT + b"`",
    PREFIX + b"`" + OBJECT + b"`",
    b"> " + PREFIX + OBJECT,
    b"9999-11-28T00:42:31.912399871Z " + OBJECT,
    b"1066-11-28T00:42:31Z " + OBJECT,
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"9999-11-28T00:42:31.912345Z"),
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"2026-11-28T00:42:31.9Z"),
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"2026-11-28T00:42:31.123456789Z"),
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"2026-11-28T00:42:31Z"),
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"2026-11-28 00:42:31.9Z"),
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"2026-11-28T24:42:31.9Z"),
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"2026-11-28T00:42:31.\xd9\xa3Z"),
    PREFIX + OBJECT.replace(b"2026-11-28T00:42:31.912345Z", b"2026-11-28T00:40:01.000000+00:00"),
    PREFIX + OBJECT.replace(b"00:42:31.912345Z", b"00:59:31.912345Z"),  # prefix 17 min early
    PREFIX + OBJECT.replace(b'"level":"info"', b'"level":"warn"'),
    PREFIX + OBJECT.replace(b'"level":"info"', b'"level":"INFO"'),
    PREFIX + OBJECT.replace(b'"level":"info"', b'"level":7'),
    PREFIX + OBJECT.replace(b'"level":"info",', b""),
    PREFIX + OBJECT.replace(b'"kind":""', b'"kind":null'),
    PREFIX + OBJECT.replace(b'"kind":""', b'"kind":["a"]'),
    PREFIX + OBJECT.replace(b'"kind":""', b'"kind":"","port":8443'),
    PREFIX + OBJECT.replace(b'"kind":""', b'"kind":"","kind":"VirtualMachine"'),
    PREFIX + OBJECT.replace(b"b5861adf-a1ce-473a-b0b6-b37c7442c6db", b"not-a-uid"),
    PREFIX + OBJECT.replace(b'"name":"web"', b'"name":"we\xe2\x80\xa6"'),
    PREFIX + OBJECT.replace(b'"name":"web"', b'"name":""'),
    PREFIX + OBJECT.replace(b'"msg":"Started', b'"msg":"  Started'),
    PREFIX + OBJECT.replace(b'"msg":"Started VM', b'"msg":"\\u001b[1mStarted VM'),
    PREFIX + b'{"message":' + b'"{}","podName":"virt-controller-1","containerName":"c"}',
    PREFIX + b'{"level":"info","msg":"cut off',
    b'"timestamp":"2026-11-28T00:42:32Z"}',
    PREFIX + b"[" + OBJECT + b"]",
    PREFIX + b"{" * 2000 + b"}" * 2000,
    b"\tgoroutine 7 [running]:",
    b"\tmain.main()",
    b"panic: runtime error: index out of range [recovered]",
    b"goroutine 7 [running]:",
    b'E1128 00:42:33.640019       1 runtime.go:142] "Observed a panic" stacktrace=<',
    b" >",
    b"I1128 00:42:34.100214       1 leaderelection.go:257] attempting to acquire leader lease",
    b'level=info timestamp=2018-06-11T08:02:33.019271Z pos=vm.go:112 kind= msg="Creating"',
    b"==== START logs for container virt-controller of pod kubevirt/virt-controller-2 ====",
    b"==== END logs for container virt-controller of pod kubevirt/virt-controller-2 ====",
    b"Pod name: virt-controller-3\t Pod phase: Running",
    b"[pod/virt-controller-4/virt-controller] " + PREFIX + OBJECT,
    b"logs/virt-controller.log:12:" + PREFIX + OBJECT,
    b"",
    b"```json",
    b"x" * 300 + OBJECT,
]


def _both(lines: list[bytes], policy: str = "skip", max_line: int = 1 << 20) -> None:
    full = LogParser(SOURCE, policy=policy, anchor=ANCHOR, max_line=max_line)
    fast = FastLogParser(SOURCE, policy=policy, anchor=ANCHOR, max_line=max_line)
    for line_no, line in enumerate(lines, 1):
        # frozen records: == compares every field, provenance and the raw line included
        assert fast.feed(line_no, line) == full.feed(line_no, line), line
    assert fast.close() == full.close()
    assert fast.tally == full.tally
    assert fast.internal_errors == full.internal_errors == []


@pytest.mark.parametrize("path", SAMPLE_LOGS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_file_reads_the_same(path: Path) -> None:
    _both(path.read_bytes().splitlines(keepends=True))


def test_every_json_line_of_the_samples_is_fast() -> None:
    """The point of the fast path: in the shipped samples only the klog lines (the lease's
    leaderelection.go lines) take the full parser."""
    slow = []
    for path in (p for p in SAMPLE_LOGS if p.suffix == ".log"):
        parser = FastLogParser(SOURCE, anchor=ANCHOR)
        for line_no, line in enumerate(path.read_bytes().splitlines(), 1):
            before = parser.fast_lines
            parser.feed(line_no, line)
            if parser.fast_lines == before and not KLOG.match(line):
                slow.append(f"{path}:{line_no}")
    assert slow == []


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_simulated_logs_read_the_same(seed: int) -> None:
    history = legitimate(seed) if seed % 2 else with_fault(seed, "duplicate-create")
    for log, _ in history.capture().logs:
        prefixed = log.render().encode().splitlines(keepends=True)
        _both(prefixed)
        _both(log.bodies().encode().splitlines())
        cri = [line[:31] + b"stderr F " + line[31:] for line in prefixed]
        _both(cri)


@pytest.mark.parametrize("policy", ["skip", "keep"])
def test_hostile_lines_in_file_order(policy: str) -> None:
    _both(HOSTILE, policy)
    _both(HOSTILE, policy, max_line=len(OBJECT) + 10)


def test_hostile_lines_shuffled() -> None:
    rng = random.Random(16)
    for _ in range(200):
        _both(rng.choices(HOSTILE, k=12))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.sampled_from(HOSTILE) | st.binary(max_size=40), max_size=10), st.data())
def test_any_mix_reads_the_same(lines: list[bytes], data: st.DataObject) -> None:
    """Hostile lines, random bytes, and a common line cut at any byte."""
    cut = data.draw(st.integers(0, len(PREFIX + OBJECT)))
    _both([*lines, (PREFIX + OBJECT)[:cut], *lines])
