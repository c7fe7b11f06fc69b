"""kubectl's flags on kvtrace's commands, offline: ``-n``, ``-l``, ``--since``, and the input
checks of issue 17 (a bad ``--kubevirt-version``, ``collect -f x.zip``, an empty leader log,
``--log -`` on a terminal)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvsim.bundle import write_bundle
from kvsim.cluster import Cluster
from kvsim.history import T0
from kvsim.kernel import SECOND
from kvtrace.sources.selectors import parse_selector
from tests.conftest import ROOT, SAMPLES
from tests.helpers import run_cli

ALWAYS = str(SAMPLES / "always-restart")
DUPLICATE = str(SAMPLES / "fault-duplicate-create")
GAP = str(SAMPLES / "leader-failover-gap")


def _json(out: str) -> dict:
    return json.loads(out)


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> str:
    """A kvsim cluster with three VMs, two namespaces, one labelled by a user (kubectl label)."""

    def label(vm: dict) -> None:
        vm["metadata"].setdefault("labels", {})["team"] = "storage"

    cluster = Cluster("labels", T0, replicas_count=1)
    cluster.create_vm(T0 + 10 * SECOND, "db", namespace="prod")
    cluster.create_vm(T0 + 12 * SECOND, "web", namespace="prod")
    cluster.create_vm(T0 + 14 * SECOND, "web", namespace="default")
    cluster.edit_vm(T0 + 60 * SECOND, "db", label, "kubectl label vm", namespace="prod")
    capture = cluster.capture(T0 + 180 * SECOND)
    return str(write_bundle(capture, tmp_path_factory.mktemp("labelled") / "bundle"))


# --- -n -----------------------------------------------------------------------------------


def test_timeline_takes_n_as_kubectl_does(capsys):
    code, by_flag, _ = run_cli(
        capsys, "timeline", "-n", "default", "testvm", "-b", ALWAYS, "-o", "json"
    )
    assert code == 0
    code, by_key, _ = run_cli(capsys, "timeline", "default/testvm", "-b", ALWAYS, "-o", "json")
    assert code == 0 and _json(by_flag)["metadata"] == _json(by_key)["metadata"]
    assert _json(by_flag)["metadata"]["namespace"] == "default"


@pytest.mark.parametrize("spelling", ["--namespace", "--namespac"])
def test_namespace_is_never_taken_for_kubevirt_namespace(capsys, spelling):
    code, _, err = run_cli(capsys, "rules", spelling, "default")
    assert code == 2 and "No such option" in err
    assert "Did you mean" not in err and "kvtrace rules reads no objects of a namespace" in err


def test_leader_takes_n_as_where_kubevirt_runs(capsys):
    code, by_n, _ = run_cli(capsys, "leader", "status", "-n", "kubevirt", "-b", GAP, "-o", "json")
    code2, by_flag, _ = run_cli(
        capsys, "leader", "status", "--kubevirt-namespace", "kubevirt", "-b", GAP, "-o", "json"
    )
    assert (code, by_n) == (code2, by_flag)
    code, out, _ = run_cli(capsys, "leader", "status", "-n", "other", "-b", GAP)
    assert code == 3 and "none found in other" in out
    code, _, err = run_cli(
        capsys, "leader", "history", "-n", "kubevirt", "--kubevirt-namespace", "x", "-b", GAP
    )
    assert code == 2 and "disagree" in err


# --- -l -----------------------------------------------------------------------------------


def test_selector_grammar_is_the_api_servers():
    labels = {"team": "storage", "app": "db"}
    assert parse_selector("team=storage").matches(labels)
    assert parse_selector("team==storage,app").matches(labels)
    assert not parse_selector("team!=storage").matches(labels)
    assert parse_selector("team in (storage, web),!tier").matches(labels)
    assert not parse_selector("app notin (db)").matches(labels)
    assert parse_selector("tier!=x").matches(labels)  # != also matches a missing key, as the API
    assert not parse_selector("!team").matches(labels)


@pytest.mark.parametrize("command", [["check", "-A"], ["timeline"]])
def test_a_bad_selector_is_a_usage_error_naming_the_grammar(capsys, command):
    code, _, err = run_cli(capsys, *command, "-l", "team=storage x", "-b", ALWAYS)
    assert code == 2 and "key in (a,b)" in err and "Traceback" not in err


def test_check_selects_vms_by_their_labels(capsys, labelled):
    code, out, _ = run_cli(
        capsys, "check", "-A", "-l", "team=storage", "-b", labelled, "-o", "json"
    )
    assert code == 0
    assert [(i["namespace"], i["name"]) for i in _json(out)["items"]] == [("prod", "db")]
    code, out, _ = run_cli(capsys, "check", "-A", "-l", "!team", "-b", labelled, "-o", "json")
    names = [(i["namespace"], i["name"]) for i in _json(out)["items"]]
    assert names == [("default", "web"), ("prod", "web")]
    code, out, _ = run_cli(
        capsys, "check", "-n", "prod", "-l", "team notin (storage)", "-b", labelled, "-o", "json"
    )
    assert [(i["namespace"], i["name"]) for i in _json(out)["items"]] == [("prod", "web")]


def test_check_selector_matching_nothing_says_so(capsys, labelled):
    code, _, err = run_cli(capsys, "check", "-A", "-l", "team=web", "-b", labelled)
    assert code == 1 and "no VMs found for all namespaces, labels team=web" in err


def test_timeline_picks_the_one_vm_a_selector_matches(capsys, labelled):
    code, out, _ = run_cli(
        capsys, "timeline", "-n", "prod", "-l", "team=storage", "-b", labelled, "-o", "json"
    )
    assert code == 0 and _json(out)["metadata"]["name"] == "db"
    code, out, _ = run_cli(
        capsys, "timeline", "-n", "prod", "-l", "!team", "-b", labelled, "-o", "json"
    )
    assert code == 0 and _json(out)["metadata"]["name"] == "web"
    code, _, err = run_cli(capsys, "timeline", "-n", "prod", "-l", "team", "-b", labelled, "db")
    assert code == 2 and "not both" in err
    code, _, err = run_cli(capsys, "timeline", "-l", "team", "-b", labelled)
    assert code == 1 and "no VM in namespace default" in err


def test_timeline_selector_matching_several_lists_them(capsys, labelled):
    code, out, _ = run_cli(
        capsys,
        "timeline",
        "-n",
        "prod",
        "-l",
        "team in (storage),!x,app!=y",
        "-b",
        labelled,
        "-o",
        "json",
    )
    assert code == 0 and _json(out)["metadata"]["name"] == "db"
    code, _, err = run_cli(capsys, "timeline", "-n", "prod", "-l", "!nothere", "-b", labelled)
    assert code == 2 and "matches 2 VMs in prod (db, web)" in err


# --- --since ------------------------------------------------------------------------------


def test_check_since_keeps_only_verdicts_reaching_the_window(capsys):
    code, whole, _ = run_cli(capsys, "check", "-A", "-b", DUPLICATE, "-o", "json")
    assert code == 3
    everything = _json(whole)["items"][0]["violations"]
    code, recent, _ = run_cli(
        capsys, "check", "-A", "-b", DUPLICATE, "-o", "json", "--since", "10h"
    )
    assert code == 3 and _json(recent)["items"][0]["violations"] == everything
    code, out, _ = run_cli(capsys, "check", "-A", "-b", DUPLICATE, "-o", "json", "--since", "1s")
    document = _json(out)
    assert code == 0 and document["items"] == []  # nothing happened in the last second
    assert any("with no row from --since on not shown" in n for n in document["status"]["notes"])


def test_check_since_rejects_a_bad_time(capsys):
    code, _, err = run_cli(capsys, "check", "-A", "-b", ALWAYS, "--since", "yesterday")
    assert code == 2 and "cannot read time 'yesterday'" in err


def test_leader_history_since_keeps_the_epochs_reaching_the_window(capsys):
    code, out, _ = run_cli(capsys, "leader", "history", "-b", GAP, "-o", "json")
    whole = _json(out)
    assert code == 3  # the sample's leaderless gap outlasted the lease
    code, out, _ = run_cli(capsys, "leader", "history", "-b", GAP, "-o", "json", "--since", "1m")
    assert code == 0  # the gap ended before the window: the last minute is all fine
    recent = _json(out)
    assert len(_epochs(whole)) == 2 and len(_epochs(recent)) == 1
    assert _epochs(recent)[0] == _epochs(whole)[-1]  # the epoch still held keeps its true start


def _epochs(document: dict) -> list:
    found = document.get("epochs") or document.get("spec", {}).get("epochs")
    if found is None:
        found = document.get("status", {}).get("epochs")
    assert found is not None, sorted(document)
    return found


# --- input checks --------------------------------------------------------------------------


def test_kubevirt_version_garbage_is_a_usage_error_listing_what_is_accepted(capsys):
    code, _, err = run_cli(capsys, "check", "-A", "--kubevirt-version", "garbage", "-b", ALWAYS)
    assert code == 2 and "Invalid value for '--kubevirt-version'" in err
    assert "v0.53.0 … v1.9.0" in err and "v1.7" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["x.zip", "x.tar.xz", "x.json"])
def test_collect_refuses_a_file_name_it_would_write_as_a_directory(capsys, tmp_path, name):
    target = tmp_path / name
    code, _, err = run_cli(capsys, "collect", "-f", str(target))
    assert code == 2 and "not a directory" not in err and ".tar.gz" in err
    assert not target.exists()


def test_leader_history_of_an_empty_log_is_not_all_fine(capsys, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    code, _, err = run_cli(capsys, "leader", "history", "--log", str(empty))
    assert code == 1 and "no leader-election lines and no Lease" in err and str(empty) in err


def test_log_dash_on_a_terminal_says_it_waits_for_stdin():
    primary, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "kvtrace", "leader", "history", "--log", "-"],
            stdin=secondary,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        time.sleep(1.0)
        os.write(primary, b"\x04")  # Ctrl-D: the end of what was typed
        _, err = process.communicate(timeout=60)
    finally:
        os.close(primary)
        os.close(secondary)
    text = err.decode()
    assert text.startswith("kvtrace: reading the log from the terminal (--log -)")
    assert "Ctrl-D" in text and process.returncode == 1


def test_log_dash_from_a_pipe_says_nothing_of_a_terminal(tmp_path):
    log = Path(ALWAYS) / "logs"
    first = sorted(log.rglob("*.log"))[0].read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "kvtrace", "leader", "history", "--log", "-"],
        input=first,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert b"reading the log from the terminal" not in done.stderr
