"""Kubernetes names from the API server, checked before they become a path or a URL segment.

The API server only accepts objects whose names follow these rules (apimachinery's
``validation.IsDNS1123Label`` / ``IsDNS1123Subdomain``): namespaces and container names are
DNS-1123 labels, pod and node names DNS-1123 subdomains. A name that breaks them did not come
from a real API server's validation, so kvtrace never uses it as a file name or in a URL.
"""

from __future__ import annotations

import re

LABEL_MAX = 63
SUBDOMAIN_MAX = 253
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SHOWN = 80  # characters of a refused name quoted in a message


def is_label(name: str) -> bool:
    """A DNS-1123 label: lower-case alphanumerics and ``-``, at most 63, alphanumeric ends."""
    return len(name) <= LABEL_MAX and _LABEL.fullmatch(name) is not None


def is_subdomain(name: str) -> bool:
    """A DNS-1123 subdomain: dot-separated labels, at most 253 characters."""
    return 0 < len(name) <= SUBDOMAIN_MAX and all(is_label(part) for part in name.split("."))


def refusal(what: str, name: str, label: bool = False) -> str | None:
    """Why ``name`` cannot be used as a ``what`` name, or None when it is a valid one."""
    if (is_label if label else is_subdomain)(name):
        return None
    rule = "DNS-1123 label" if label else "DNS-1123 subdomain"
    return f"{what} name {shown(name)} is not a valid Kubernetes name ({rule})"


def shown(name: str) -> str:
    """A stranger's name, quoted with escapes and shortened, fit for one line of a message."""
    quoted = ascii(name[:_SHOWN])
    return quoted + ("…" if len(name) > _SHOWN else "")
