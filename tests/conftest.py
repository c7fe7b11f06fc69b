"""Shared test fixtures: golden files, the samples, a fixed environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample-logs"
GOLDEN = Path(__file__).resolve().parent / "golden"

os.environ["TZ"] = "UTC"
os.environ["COLUMNS"] = "200"

# CI runs every property on a fixed, derandomised set of examples, so a red run can be re-run
# and a green one means the same examples passed; by hand, HYPOTHESIS_PROFILE=dev explores new
# ones (and KVTRACE_EXAMPLES / KVTRACE_HISTORIES raise the counts).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", help="rewrite golden files from current output"
    )


class Golden:
    """Compare text with ``tests/golden/<name>``; ``--update-golden`` rewrites the file."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, name: str, text: str) -> None:
        path = GOLDEN / name
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        assert path.exists(), f"golden file {path} missing: run pytest --update-golden and read it"
        assert text == path.read_text(), (
            f"output differs from {path} (pytest --update-golden to accept)"
        )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden(bool(request.config.getoption("--update-golden")))
