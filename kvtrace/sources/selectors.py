"""Label selectors (``-l``), read as the Kubernetes API server reads them, matched offline.

The grammar is the API's: terms separated by commas, each ``key=value``, ``key==value``,
``key!=value``, ``key in (v1,v2)``, ``key notin (v1,v2)``, ``key`` (exists) or ``!key`` (does not
exist). Live, the text goes to the API server unchanged as ``labelSelector``; offline, the same
terms are matched against each object's ``metadata.labels``, so a bundle and a cluster select
the same VMs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kvtrace.errors import UsageError
from kvtrace.evidence import VM, Evidence, KubeObject

# a label key: an optional DNS-subdomain prefix and a name of at most 63 characters
_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY = rf"(?:[a-z0-9](?:[-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_NAME}"
_VALUE = rf"(?:{_NAME})?"
_TERM = re.compile(
    rf"""\s*(?:
        (?P<not>!)\s*(?P<absent>{_KEY})
      | (?P<setkey>{_KEY})\s+(?P<setop>in|notin)\s*\(\s*(?P<values>[^()]*)\)
      | (?P<key>{_KEY})\s*(?P<op>==|!=|=)\s*(?P<value>{_VALUE})
      | (?P<exists>{_KEY})
    )\s*(?:,|$)""",
    re.VERBOSE,
)
ACCEPTED = "key=value, key==value, key!=value, key in (a,b), key notin (a,b), key, !key"


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # in | notin | exists | absent
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "exists":
            return self.key in labels
        if self.operator == "absent":
            return self.key not in labels
        if self.operator == "in":
            return labels.get(self.key) in self.values
        return labels.get(self.key) not in self.values  # notin and != also match a missing key


@dataclass(frozen=True)
class LabelSelector:
    """A parsed ``-l``: ``text`` as given (sent to the API), ``requirements`` all to hold."""

    text: str
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, object] | None) -> bool:
        shown = {str(k): str(v) for k, v in (labels or {}).items()}
        return all(r.matches(shown) for r in self.requirements)


def parse_selector(text: str) -> LabelSelector:
    """The selector of ``-l TEXT``; a term that is not of the API's grammar is a usage error."""
    requirements: list[Requirement] = []
    position = 0
    while position < len(text):
        found = _TERM.match(text, position)
        if found is None or found.end() == position:
            raise UsageError(
                f"cannot read label selector {text!r} at {text[position:]!r}: give terms such as "
                f"{ACCEPTED}, separated by commas"
            )
        requirements.append(_requirement(found))
        position = found.end()
    if not requirements:
        raise UsageError(f"the label selector is empty: give terms such as {ACCEPTED}")
    return LabelSelector(text.strip(), tuple(requirements))


def _requirement(found: re.Match[str]) -> Requirement:
    if found["absent"]:
        return Requirement(found["absent"], "absent")
    if found["setkey"]:
        values = frozenset(v.strip() for v in found["values"].split(",") if v.strip())
        return Requirement(found["setkey"], found["setop"], values)
    if found["key"]:
        operator = "notin" if found["op"] == "!=" else "in"
        return Requirement(found["key"], operator, frozenset({found["value"]}))
    return Requirement(found["exists"], "exists")


def selected_vms(
    evidence: Evidence, selector: LabelSelector, namespace: str | None = None
) -> list[tuple[str, str]]:
    """(namespace, name) of every VM object of ``namespace`` (None: all) the selector matches."""
    keys = {
        (vm.namespace or "default", vm.name)
        for vm in evidence.of_kind(VM)
        if (namespace is None or (vm.namespace or "default") == namespace)
        and selector.matches(labels_of(vm))
    }
    return sorted(keys)


def labels_of(obj: KubeObject) -> Mapping[str, object]:
    metadata = obj.body.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return labels if isinstance(labels, dict) else {}
