"""Refuse YAML whose loaded form would be far larger than its text, before loading it.

PyYAML loads an alias as a second reference to the anchored node: a 1 KB "billion laughs"
document loads small, but everything that walks it (list expansion, indexing, JSON output) visits
each node once per path to it, 10^9 times. Kubernetes object dumps (``kubectl get -o yaml``, the
API server's JSON) never contain anchors or aliases. One pass over the parser's events counts the
nodes the documents hold *with every alias expanded* and refuses the input past a cap; the same
count bounds the memory a huge, highly compressible dump of tiny nodes would take to load.

Caps (arguments of :func:`yaml_refusal` and ``load_manifests``, defaults here):
:data:`MAX_YAML_BYTES` of YAML text per input, :data:`MAX_ALIASES` aliases per input,
:data:`MAX_NODES` nodes per input with aliases expanded; an alias to a node that is still open
(a document that contains itself) is refused whatever the counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_YAML_BYTES = 256 << 20  # one YAML file; JSON (orjson: compact, no aliases) has no cap here
MAX_ALIASES = 100
MAX_NODES = 4_000_000  # about 600 MB loaded; a 50 MB events list holds about 2 million
GUARD_FROM_BYTES = 4 << 20  # smaller inputs without '&' or '*' cannot reach either cap


@dataclass(frozen=True)
class Refusal:
    """Why the input is not loaded, and the 0-based line where the cap was crossed."""

    line: int
    message: str


@dataclass
class _Count:
    nodes: int = 0
    aliases: int = 0
    sizes: dict[str, int] = field(default_factory=dict)  # anchor -> nodes, aliases expanded
    open: list[tuple[str | None, int]] = field(default_factory=list)  # (anchor, nodes before)

    def add(self, event: Any) -> str | None:
        """Count one event; a reason to refuse, or None."""
        import yaml  # here: only YAML input needs it (start-up)

        if isinstance(event, yaml.AliasEvent):
            return self._alias(event.anchor or "")
        if isinstance(event, yaml.ScalarEvent):
            self.nodes += 1
            if event.anchor:
                self.sizes[event.anchor] = 1
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            self.open.append((event.anchor, self.nodes))
            self.nodes += 1
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, before = self.open.pop()
            if anchor:
                self.sizes[anchor] = self.nodes - before
        return None

    def _alias(self, anchor: str) -> str | None:
        self.aliases += 1
        if any(name == anchor for name, _ in self.open):
            return f"the YAML alias *{anchor} refers to a node that contains it"
        self.nodes += self.sizes.get(anchor, 1)  # an undefined alias: the loader reports it
        return None


def yaml_refusal(
    text: str, loader: Any, max_aliases: int = MAX_ALIASES, max_nodes: int = MAX_NODES
) -> Refusal | None:
    """Why ``text`` must not be loaded (too many aliases, too many nodes once they are expanded,
    a self-referencing alias), or None. Text the parser rejects is left to the loader's error."""
    if len(text) < GUARD_FROM_BYTES and "&" not in text and "*" not in text:
        return None
    import yaml

    count = _Count()
    try:
        for event in yaml.parse(text, Loader=loader):
            reason = count.add(event) or _over(count, max_aliases, max_nodes)
            if reason is not None:
                mark = event.start_mark
                return Refusal(mark.line if mark is not None else 0, reason)
    except yaml.YAMLError:
        return None
    return None


def _over(count: _Count, max_aliases: int, max_nodes: int) -> str | None:
    if count.aliases > max_aliases:
        return (
            f"more than {max_aliases} YAML aliases (Kubernetes object dumps use none): "
            "refused, as an alias bomb would be"
        )
    if count.nodes > max_nodes:
        return (
            f"more than {max_nodes} YAML nodes with aliases expanded: refused to bound memory; "
            "split the file"
        )
    return None
