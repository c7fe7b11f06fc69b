"""YAML alias bombs and self-referencing structures (issue 14): refused or walked once, never a
spin or a runaway allocation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from kvtrace.sources.bundle import open_bundle
from parsers.manifests import expand_lists, load_manifests, plain_time_loader
from parsers.yamlguard import MAX_ALIASES, yaml_refusal


def _laughs(levels: int = 9, width: int = 10) -> str:
    """The classic "billion laughs": each level lists the one before ``width`` times."""
    lines = ["apiVersion: v1", "kind: EventList", "a0: &a0 [lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append(f"items: [*a{levels}]")
    return "\n".join(lines) + "\n"


def _list_bomb(levels: int = 9, width: int = 10) -> str:
    """The list variant: no mapping at all, only lists of aliases, walked by list expansion."""
    docs = ["- &l0 [{kind: Event}]"]
    docs += [f"- &l{n} [{', '.join([f'*l{n - 1}'] * width)}]" for n in range(1, levels + 1)]
    return "\n".join(docs) + "\n"


@pytest.mark.parametrize("text", [_laughs(), _list_bomb()])
def test_an_alias_bomb_is_refused_with_a_reason(text: str) -> None:
    assert len(text) < 1200
    loaded = load_manifests(text.encode(), "objects/events.yaml")
    assert loaded.objects == [] and loaded.error is not None
    assert "objects/events.yaml" in str(loaded.error) and "aliases expanded" in str(loaded.error)


def test_too_many_aliases_are_refused() -> None:
    text = "kind: Pod\nx: &x 1\nys: [" + ", ".join(["*x"] * (MAX_ALIASES + 1)) + "]\n"
    error = load_manifests(text.encode(), "pods.yaml").error
    assert error is not None and f"more than {MAX_ALIASES} YAML aliases" in error.message
    assert error.line == 3


def test_a_few_aliases_still_load() -> None:
    text = "kind: Pod\nmetadata: {name: p, labels: &l {app: x}}\nspec: {selector: *l}\n"
    (pod,) = load_manifests(text.encode()).objects
    assert pod["spec"]["selector"] == {"app": "x"}


def test_a_document_containing_itself_is_refused() -> None:
    error = load_manifests(b"kind: List\nitems: &a [*a]\n", "x.yaml").error
    assert error is not None and "refers to a node that contains it" in error.message


def test_the_node_cap_counts_expanded_aliases() -> None:
    assert yaml_refusal("a: &a [1, 2, 3]\nb: [*a, *a]\n", plain_time_loader(), max_nodes=14)
    assert yaml_refusal("a: &a [1, 2, 3]\nb: [*a]\n", plain_time_loader(), max_nodes=14) is None


def test_expand_lists_ends_on_a_structure_that_contains_itself() -> None:
    loop: list[Any] = [{"kind": "Pod"}]
    loop.append(loop)
    listed: dict[str, Any] = {"kind": "List", "items": [{"kind": "Pod"}]}
    listed["items"].append(listed)
    assert expand_lists(loop) == [{"kind": "Pod"}]
    assert expand_lists(listed) == [{"kind": "Pod"}]


def test_expand_lists_visits_a_shared_list_once() -> None:
    shared: list[Any] = [{"kind": "Event"}]
    for _ in range(40):  # 2**40 paths to the one event
        shared = [shared, shared]
    assert expand_lists(shared) == [{"kind": "Event"}]


def test_expand_lists_is_not_limited_by_nesting_depth() -> None:
    deep: list[Any] = [{"kind": "Pod"}]
    for _ in range(100_000):
        deep = [deep]
    assert expand_lists(deep) == [{"kind": "Pod"}]


def test_a_bundle_with_an_alias_bomb_skips_the_file_and_names_it(tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "objects").mkdir(parents=True)
    manifest = {
        "apiVersion": "kvtrace.io/v1alpha1",
        "kind": "BundleManifest",
        "formatVersion": 1,
        "capturedAt": "2026-11-30T07:00:00.000000Z",
        "collected": [{"kind": "Event", "file": "objects/events.yaml", "count": 1}],
        "logs": [],
    }
    (root / "manifest.json").write_bytes(orjson.dumps(manifest))
    (root / "objects/events.yaml").write_text(_laughs())
    with open_bundle(root) as evidence:
        reasons = [reason for path, reason in evidence.skipped if path == "objects/events.yaml"]
    assert reasons and "aliases expanded" in reasons[0]


def test_yaml_past_the_byte_cap_is_refused_and_json_is_not() -> None:
    events = "kind: EventList\nitems:\n" + "- {kind: Event}\n" * 100
    error = load_manifests(events.encode(), "events.yaml", max_yaml_bytes=1000).error
    assert error is not None and "over the 1000-byte cap" in error.message
    as_json = orjson.dumps({"kind": "EventList", "items": [{"kind": "Event"}] * 100})
    assert len(load_manifests(as_json, "events.json", max_yaml_bytes=1000).objects) == 100


def test_a_large_dump_of_tiny_nodes_is_refused_by_the_node_cap() -> None:
    text = "kind: List\nitems:\n" + "- {kind: Event, n: 1}\n" * 2000
    assert len(text) < 1 << 20
    refusal = yaml_refusal(text + "x: &x 1\n", plain_time_loader(), max_nodes=5000)
    assert refusal is not None and refusal.line < 2000
