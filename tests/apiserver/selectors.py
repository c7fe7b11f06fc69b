"""Label and field selectors, the subset kvtrace uses: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``."""

from __future__ import annotations

from typing import Any


def label_matches(item: dict[str, Any], selector: str | None) -> bool:
    labels = item.get("metadata", {}).get("labels") or {}
    return all(_term(labels, term.strip()) for term in (selector or "").split(",") if term.strip())


def field_matches(item: dict[str, Any], selector: str | None) -> bool:
    meta = item.get("metadata", {})
    values = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace")}
    return all(_term(values, term.strip()) for term in (selector or "").split(",") if term.strip())


def _term(values: dict[str, Any], term: str) -> bool:
    if "!=" in term:
        key, value = term.split("!=", 1)
        return values.get(key) != value
    if "=" in term:
        key, value = term.replace("==", "=").split("=", 1)
        return values.get(key) == value
    if term.startswith("!"):
        return term[1:] not in values
    return term in values
