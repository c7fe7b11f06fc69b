"""What a new user installs: the README's first commands, the Python it names, the licence, the
package metadata, the console scripts and the krew manifest template agree with each other."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import tomllib
import yaml

from kvtrace import __version__
from tests.conftest import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _first_commands() -> list[str]:
    block = README.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readme_starts_in_a_virtualenv_of_the_python_pyproject_requires():
    venv, install, tests = _first_commands()
    assert venv.startswith("python3 -m venv .venv && . .venv/bin/activate")
    floor = PROJECT["requires-python"].removeprefix(">=")
    assert f"Python {floor} or newer" in README and f"python{floor} -m venv" in README
    assert install.startswith("pip install . && kvtrace timeline")
    assert tests == "pip install -e '.[test]' && python -m pytest"
    assert sys.version_info >= tuple(int(p) for p in floor.split("."))


def test_the_readmes_first_command_runs_on_the_shipped_sample():
    command = _first_commands()[1].split("&& ", 1)[1].split()
    assert command[0] == "kvtrace" and (ROOT / command[-1]).is_dir()
    done = subprocess.run(
        [sys.executable, "-m", "kvtrace", *command[1:]], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0 and "Starting VM due to runStrategy: Always" in done.stdout


def test_the_licence_is_the_apache_licence_pyproject_names():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert PROJECT["license"] == {"text": "Apache-2.0"}
    assert "License :: OSI Approved :: Apache Software License" in PROJECT["classifiers"]


def test_the_metadata_a_package_index_shows():
    assert PROJECT["urls"] and all(u.startswith("https://") for u in PROJECT["urls"].values())
    assert {"kubevirt", "kubectl-plugin"} <= set(PROJECT["keywords"])
    floor = PROJECT["requires-python"].removeprefix(">=")
    assert f"Programming Language :: Python :: {floor}" in PROJECT["classifiers"]


def test_every_console_script_is_a_callable():
    scripts = PROJECT["scripts"]
    assert set(scripts) == {"kvtrace", "kubectl-kvtrace", "kubectl_complete-kvtrace"}
    for target in scripts.values():
        module, name = target.split(":")
        assert callable(getattr(importlib.import_module(module), name))


def test_the_krew_manifest_template_is_krews_shape_and_kvtraces_version():
    text = (ROOT / "krew" / "kvtrace.yaml").read_text(encoding="utf-8")
    manifest = yaml.safe_load(text)
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin" and manifest["metadata"]["name"] == "kvtrace"
    spec = manifest["spec"]
    assert spec["version"] == f"v{__version__}" and spec["shortDescription"]
    platforms = {
        (p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"])
        for p in spec["platforms"]
    }
    assert platforms == {
        ("linux", "amd64"),
        ("linux", "arm64"),
        ("darwin", "amd64"),
        ("darwin", "arm64"),
    }
    for platform in spec["platforms"]:
        assert platform["bin"] == "kubectl-kvtrace"
        assert re.fullmatch(r"[0-9a-f]{64}", platform["sha256"])
        assert f"v{__version__}" in platform["uri"]
    assert "TEMPLATE" in text and "kubectl_complete-kvtrace" in spec["caveats"]
