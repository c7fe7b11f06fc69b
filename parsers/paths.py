"""Pod identity from a log file's path: node log files (``/var/log/containers``,
``/var/log/pods``), ``oc adm inspect`` and must-gather trees, ``--vm-incident`` copies,
``kubectl cluster-info dump`` and kvtrace bundles.

The component name inside a log line does not say which pod wrote it; the path does. Unknown
layouts yield a :class:`SourceInfo` with only ``source_id`` set.
"""

from __future__ import annotations

import re

from parsers.records import SourceInfo

_SEG = r"[^/]+"
_LABEL = r"[^/_]+"  # pod, namespace and container names never contain `_`

# First match wins; the most specific layouts come first.
_PATTERNS: tuple[re.Pattern[str], ...] = (
    # /var/log/containers/<pod>_<ns>_<container>-<64 hex>.log
    re.compile(
        rf"(?:^|/)(?P<pod>{_LABEL})_(?P<ns>{_LABEL})_(?P<c>{_LABEL})-[0-9a-f]{{64}}\.log"
        r"(?:\.[^/]*)?$"
    ),
    # /var/log/pods/<ns>_<pod>_<uid>/<container>/<restart>.log[.<date>][.gz]
    re.compile(
        rf"(?:^|/)(?P<ns>{_LABEL})_(?P<pod>{_LABEL})_[0-9a-fA-F-]{{36}}/(?P<c>{_SEG})/\d+\.log"
        r"(?:\.[^/]*)?$"
    ),
    # oc adm inspect: namespaces/<ns>/pods/<pod>/<c>/<c>/logs/(current|previous)[.insecure].log
    re.compile(
        rf"(?:^|/)namespaces/(?P<ns>{_SEG})/pods/(?P<pod>{_SEG})/(?P<c>{_SEG})/{_SEG}/logs/"
        r"(?P<inst>current|previous)(?:\.insecure)?\.log(?:\.gz)?$"
    ),
    # oc adm inspect rotated kubelet files: .../logs/rotated/<restart>.log.<YYYYMMDD-hhmmss>[.gz]
    # (or .log.<n>): earlier segments of one container's log; which instance is not said
    re.compile(
        rf"(?:^|/)namespaces/(?P<ns>{_SEG})/pods/(?P<pod>{_SEG})/(?P<c>{_SEG})/{_SEG}/logs/"
        r"rotated/\d+\.log(?:\.[\w-]+)?(?:\.gz)?$"
    ),
    # must-gather --vm-incident: namespaces/<ns>/core/pods/<pod>/<c>-(current|previous).log
    re.compile(
        rf"(?:^|/)namespaces/(?P<ns>{_SEG})/core/pods/(?P<pod>{_SEG})/(?P<c>{_SEG})-"
        r"(?P<inst>current|previous)\.log(?:\.gz)?$"
    ),
    # kvtrace's own bundle: logs/<ns>/<pod>/<container>/(current|previous).log
    re.compile(
        rf"(?:^|/)logs/(?P<ns>{_SEG})/(?P<pod>{_SEG})/(?P<c>{_SEG})/"
        r"(?P<inst>current|previous)\.log(?:\.gz)?$"
    ),
    # Harvester-like support bundle (layout not verified): logs/<ns>/<pod>/<container>.log
    re.compile(rf"(?:^|/)logs/(?P<ns>{_SEG})/(?P<pod>{_SEG})/(?P<c>{_SEG})\.log(?:\.gz)?$"),
    # kubectl cluster-info dump: <ns>/<pod>/logs.txt (containers split by dump markers)
    re.compile(rf"(?:^|/)(?P<ns>{_SEG})/(?P<pod>{_SEG})/logs\.txt(?:\.gz)?$"),
)


def _normalise(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def _info(source_id: str, match: re.Match[str]) -> SourceInfo:
    groups: dict[str, str | None] = match.groupdict()
    return SourceInfo(
        source_id, groups.get("pod"), groups.get("ns"), groups.get("c"), groups.get("inst")
    )


def source_from_path(path: str) -> SourceInfo:
    """Derive pod, namespace, container and instance (current/previous) from a log path.

    ``source_id`` is always the path exactly as given.
    """
    normalised = _normalise(path)
    for pattern in _PATTERNS:
        match = pattern.search(normalised)
        if match is not None:
            return _info(path, match)
    return SourceInfo(path)
