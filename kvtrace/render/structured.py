"""Machine-readable serialisers: JSON, YAML and CSV of already-shaped data."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from kvtrace.render.controls import csv_cell


def to_json(document: dict[str, Any]) -> str:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


if TYPE_CHECKING:
    import yaml


@cache
def _dumper() -> type[yaml.SafeDumper]:
    """Block-style YAML that keeps key order, like kubectl (built on first use: -o json and the
    tables never import yaml)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _str)
    return Dumper


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def to_yaml(document: dict[str, Any]) -> str:
    import yaml

    return yaml.dump(document, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=1 << 16)


def _cell(value: Any) -> Any:
    """A CSV cell: empty for null, ``true``/``false`` as in the JSON (not Python's ``False``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return csv_cell(value) if isinstance(value, str) else value


def to_csv(rows: Sequence[dict[str, Any]], fields: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(row.get(k)) for k in fields})
    return out.getvalue()
