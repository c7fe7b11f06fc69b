"""The committed samples are exactly what their deterministic generators write."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import SAMPLES


@pytest.mark.parametrize("generator", ["make_samples.py", "make_leader_samples.py"])
def test_committed_samples_match_their_generator(generator):
    proc = subprocess.run(
        [sys.executable, str(SAMPLES / generator), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
