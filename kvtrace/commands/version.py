"""``kvtrace version``: kvtrace's and Python's versions, and the KubeVirt release of the evidence.

Like ``kubectl version``: the client first, then what the other side says. With ``--bundle`` or
``--log`` the KubeVirt release is read from the evidence as every command reads it (flag, KubeVirt
CR, manifest, image tags, the log lines' call sites); with neither, from the cluster the
kubeconfig reaches (two GETs); ``--client`` asks nothing.
"""

from __future__ import annotations

import json
import platform
import sys
from typing import Any

import click

from kvtrace import __version__
from kvtrace.commands.options import evidence_options, live_options
from kvtrace.errors import ClusterError, NoClusterConfigured, TransientError
from kvtrace.sources.live.settings import ClusterSettings

_LABELS = {
    "kvtraceVersion": "kvtrace version",
    "pythonVersion": "Python version",
    "kubevirtVersion": "KubeVirt version",
    "kubernetesVersion": "Kubernetes version",
}


@click.command("version")
@click.option("--client", is_flag=True, help="Only kvtrace and Python: no evidence, no cluster.")
@evidence_options
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "yaml"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@live_options
def version_command(
    client: bool, bundle: str | None, logs: tuple[str, ...], output: str, cluster: ClusterSettings
) -> None:
    """kvtrace's version, Python's, and the KubeVirt release of a bundle or cluster.

    Without --bundle or --log, the cluster of the kubeconfig is asked (GET /version and the
    KubeVirt CR); when none is configured, only kvtrace and Python are shown. Exit 1 when a
    configured cluster cannot be reached (after printing what is known).
    """
    document: dict[str, Any] = _client()
    failure: ClusterError | None = None
    if not client and (bundle or logs):
        document.update(_from_evidence(bundle, logs))
    elif not client:
        try:
            document.update(_from_cluster(cluster))
        except NoClusterConfigured:
            pass  # nothing to ask: the client versions are the whole answer
        except ClusterError as exc:
            failure = exc
    click.echo(_serialised(document, output), nl=output == "text")
    if failure is not None:
        raise failure


def _client() -> dict[str, Any]:
    return {
        "kvtraceVersion": __version__,
        "pythonVersion": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
    }


def _from_evidence(bundle: str | None, logs: tuple[str, ...]) -> dict[str, Any]:
    from kvtrace.model.version import detect
    from kvtrace.sources.opener import open_evidence

    with open_evidence(bundle, logs) as evidence:
        found = detect(evidence)
        where = evidence.origin or bundle or ", ".join(logs)
    kubevirt: dict[str, Any] = {"version": found.version, "source": f"{found.source} in {where}"}
    if found.band:
        kubevirt["logLinesFit"] = found.band
    if found.disagreements:
        kubevirt["disagreements"] = list(found.disagreements)
    return {"kubevirtVersion": kubevirt}


def _from_cluster(cluster: ClusterSettings) -> dict[str, Any]:
    from kvtrace.sources.live.versions import cluster_versions

    try:
        found = cluster_versions(cluster)
    except TransientError as exc:
        raise ClusterError(f"cannot reach the cluster: {exc}") from None
    where = f"live cluster {found.cluster}"
    crs = [
        {
            "version": (cr.get("status") or {}).get("observedKubeVirtVersion"),
            "source": f"KubeVirt {_cr_name(cr)} in {where}",
        }
        for cr in found.kubevirt_crs
    ]
    kubevirt: dict[str, Any] = crs[0] if crs else {"version": None, "source": where}
    if found.problems:
        kubevirt["problems"] = found.problems
    return {
        "kubevirtVersion": kubevirt,
        "kubernetesVersion": {"version": found.kubernetes, "source": where},
    }


def _cr_name(cr: dict[str, Any]) -> str:
    meta = cr.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _serialised(document: dict[str, Any], output: str) -> str:
    if output == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if output == "yaml":
        import yaml

        dumped: str = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
        return dumped
    return "\n".join(_text_lines(document))


def _text_lines(document: dict[str, Any]) -> list[str]:
    from kvtrace.render.controls import visible_controls  # cluster and bundle text is a stranger's

    lines = []
    for key, label in _LABELS.items():
        value = document.get(key)
        if isinstance(value, str):
            lines.append(f"{label}: {value}")
        elif key == "pythonVersion" and isinstance(value, dict):
            lines.append(f"{label}: {value['version']} ({value['implementation']})")
        elif isinstance(value, dict):
            shown = value.get("version") or "unknown"
            extra = [value["source"], *value.get("problems", []), *value.get("disagreements", [])]
            if value.get("logLinesFit"):
                extra.insert(1, f"log lines fit {value['logLinesFit']}")
            lines.append(visible_controls(f"{label}: {shown} ({'; '.join(extra)})"))
    return lines
