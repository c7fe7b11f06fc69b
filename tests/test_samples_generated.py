"""The committed samples are exactly what their deterministic generator (the simulator) writes."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import SAMPLES


def test_committed_samples_match_their_generator():
    proc = subprocess.run(
        [sys.executable, str(SAMPLES / "make_samples.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
