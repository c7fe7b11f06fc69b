"""RBAC as the API server's authorizer applies it, from the roles in ``docs/rbac.yaml``.

ClusterRole rules hold in every namespace and cluster-wide (bound by a ClusterRoleBinding);
Role rules hold only in the Role's namespace. A rule with ``resourceNames`` allows only requests
naming one of them, so never a list. Non-resource discovery URLs (``/version``, ``/api``,
``/apis``) are open, as ``system:discovery`` and ``system:public-info-viewer`` make them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Rule:
    groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]
    names: frozenset[str]
    namespace: str | None  # None: a ClusterRole rule

    def allows(
        self, verb: str, group: str, resource: str, namespace: str | None, name: str | None
    ) -> bool:
        if self.namespace is not None and namespace != self.namespace:
            return False
        if self.names and name not in self.names:
            return False
        return (
            _match(self.groups, group)
            and _match(self.resources, resource)
            and _match(self.verbs, verb)
        )


def _match(allowed: frozenset[str], value: str) -> bool:
    return "*" in allowed or value in allowed


@dataclass
class Authorizer:
    rules: list[Rule]

    def allows(
        self, verb: str, group: str, resource: str, namespace: str | None, name: str | None
    ) -> bool:
        return any(rule.allows(verb, group, resource, namespace, name) for rule in self.rules)

    def without(self, group: str, resource: str) -> Authorizer:
        """The same roles with ``resource`` of ``group`` removed from every rule."""
        kept = []
        for rule in self.rules:
            if group in rule.groups and resource in rule.resources:
                rule = Rule(
                    rule.groups, rule.resources - {resource}, rule.verbs, rule.names, rule.namespace
                )
            if rule.resources:
                kept.append(rule)
        return Authorizer(kept)

    def resources(self) -> list[tuple[str, str]]:
        return sorted({(g, r) for rule in self.rules for g in rule.groups for r in rule.resources})


def load_roles(path: Path) -> Authorizer:
    rules: list[Rule] = []
    for document in yaml.safe_load_all(path.read_text()):
        if isinstance(document, dict) and document.get("kind") in ("ClusterRole", "Role"):
            rules.extend(_rules(document))
    return Authorizer(rules)


def _rules(role: dict[str, Any]) -> list[Rule]:
    namespace = role["metadata"].get("namespace") if role["kind"] == "Role" else None
    return [
        Rule(
            frozenset(rule.get("apiGroups") or []),
            frozenset(rule.get("resources") or []),
            frozenset(rule.get("verbs") or []),
            frozenset(rule.get("resourceNames") or []),
            namespace,
        )
        for rule in role.get("rules") or []
    ]


ALLOW_ALL = Authorizer([Rule(frozenset("*"), frozenset("*"), frozenset("*"), frozenset(), None)])
