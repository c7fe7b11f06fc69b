"""pytest fixtures and helpers for tests against the test API server."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvtrace.cli import run
from kvtrace.sources.live import api as live_api
from tests.apiserver import ApiServer, load_roles

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "sample-logs" / "always-restart"
RBAC = ROOT / "docs" / "rbac.yaml"


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServer]:
    """The always-restart sample served over HTTPS, with exactly the roles of docs/rbac.yaml."""
    workdir = tmp_path / "apiserver"
    workdir.mkdir()
    with ApiServer(SOURCE, workdir) as server:
        server.restrict(load_roles(RBAC))
        yield server


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry waits are recorded instead of slept, so fault tests stay fast."""
    recorded: list[float] = []
    monkeypatch.setattr(live_api, "_sleep", recorded.append)
    return recorded


def kvtrace(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def bundle_files(path: Path) -> dict[str, bytes]:
    """Every file of a bundle directory or archive, by path relative to its root."""
    if path.is_dir():
        return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}
    files = {}
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                files[member.name.split("/", 1)[1]] = handle.read()
    return files


def read_json(raw: bytes) -> object:
    import json

    return json.load(io.BytesIO(raw))
