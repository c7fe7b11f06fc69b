"""Shell completion: click's protocol (``_KVTRACE_COMPLETE``) for bash, zsh and fish, VM names
from a ``--bundle`` on the line or the live cluster, paths, contexts, and the kubectl plugin's
``kubectl_complete-kvtrace`` (Cobra's output: candidates, then ``:<directive>``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kvtrace.cli import plugin_completions
from kvtrace.commands.completion import bounded
from tests.apiserver.fixture import apiserver
from tests.conftest import ROOT, SAMPLES

__all__ = ["apiserver"]

ALWAYS = str(SAMPLES / "always-restart")


def complete(words: str, shell: str = "bash", **env: str) -> list[str]:
    """What click answers the shell for ``kvtrace WORDS`` (the last word is being typed)."""
    parts = words.split(" ")
    variables = {
        **os.environ,
        "_KVTRACE_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": " ".join(["kvtrace", *parts]),
        "COMP_CWORD": str(len(parts)),
        **env,
    }
    if shell != "bash":
        variables["COMP_WORDS"], variables["COMP_CWORD"] = " ".join(["kvtrace", *parts]), parts[-1]
    done = subprocess.run(
        [sys.executable, "-m", "kvtrace"],
        env=variables,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [line for line in done.stdout.splitlines() if line]  # no candidates: an empty line


@pytest.mark.parametrize(
    ("shell", "binding"),
    [
        ("bash", "complete -o nosort -F _kvtrace_completion kvtrace"),
        ("zsh", "compdef _kvtrace_completion kvtrace"),
        ("fish", "complete --no-files --command kvtrace"),
    ],
)
def test_each_shell_gets_a_script_bound_to_kvtrace(shell, binding):
    done = subprocess.run(
        [sys.executable, "-m", "kvtrace"],
        env={**os.environ, "_KVTRACE_COMPLETE": f"{shell}_source"},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "_KVTRACE_COMPLETE" in done.stdout
    assert binding in done.stdout


def test_commands_complete_without_importing_them():
    assert complete("ti") == ["plain,timeline"]
    assert complete("ver") == ["plain,verify-overhead", "plain,version"]


def test_vm_names_come_from_the_bundle_on_the_line():
    assert complete(f"timeline --bundle {ALWAYS} ") == [
        "plain,default/other-vm",
        "plain,default/testvm",
    ]
    assert complete(f"timeline -n default --bundle {ALWAYS} te") == ["plain,testvm"]
    assert complete(f"check -b {ALWAYS} -n ") == ["plain,default"]


def test_paths_are_left_to_the_shell():
    assert complete("timeline --bundle sam") == ["file,sam"]
    assert complete("check --log ") == ["file,"]
    assert complete("collect -f ") == ["file,"]


def test_an_archive_or_a_missing_bundle_completes_nothing_and_never_fails(tmp_path):
    archive = tmp_path / "b.tar.gz"
    archive.write_bytes(b"\x1f\x8b not really")
    assert complete(f"timeline --bundle {archive} ") == []
    assert complete(f"timeline --bundle {tmp_path / 'missing'} ") == []


def test_contexts_come_from_the_kubeconfig(tmp_path):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "contexts:\n- name: prod\n  context: {cluster: a, user: b}\n- name: dev\n  context: {}\n"
    )
    assert complete(f"check --kubeconfig {kubeconfig} --context ") == ["plain,dev", "plain,prod"]


def test_live_vm_names_with_static_credentials(apiserver):
    # the bound is raised: on a loaded test machine importing the client alone can take 1.5 s
    names = complete(
        "timeline ", KUBECONFIG=str(apiserver.kubeconfig), KVTRACE_COMPLETE_SECONDS="30"
    )
    assert names == ["plain,default/other-vm", "plain,default/testvm"]
    assert {(r.method, r.path) for r in apiserver.requests} == {
        ("GET", "/apis/kubevirt.io/v1/namespaces/default/virtualmachines")
    }


def test_a_slow_lookup_gives_up_in_time():
    started = time.monotonic()
    assert bounded(lambda: time.sleep(5) or ["late"], [], seconds=0.2) == []
    assert time.monotonic() - started < 2
    assert bounded(lambda: 1 / 0, "fallback") == "fallback"


def test_the_kubectl_plugin_completion_speaks_cobra():
    assert plugin_completions(["timeline", "--bundle", ALWAYS, "def"]).splitlines() == [
        "default/other-vm",
        "default/testvm",
        ":4",
    ]
    assert plugin_completions(["timeline", "--bundle", ""]) == ":0\n"  # the shell completes files
    first = plugin_completions(["ti"]).splitlines()
    assert first[0].startswith("timeline\tShow the reconcile timeline") and first[-1] == ":4"
    assert plugin_completions(["--nonsense=", "\x00"]).endswith(":4\n")
    assert plugin_completions(["check", "-o", "json"]).splitlines() == ["json", "jsonpath=", ":4"]
    assert plugin_completions(["check", "-o", "jsonp"]).splitlines() == ["jsonpath=", ":6"]


def test_the_plugin_completion_program_runs_as_kubectl_does():
    script = "import sys; sys.argv[0] = 'kubectl_complete-kvtrace'; from kvtrace.entry import complete_plugin; complete_plugin()"
    done = subprocess.run(
        [sys.executable, "-c", script, "leader", ""],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == ":4"
    assert [line.split("\t")[0] for line in done.stdout.splitlines()[:-1]] == ["history", "status"]
