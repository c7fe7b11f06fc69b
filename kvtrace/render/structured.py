"""Machine-readable serialisers: JSON, YAML and CSV of already-shaped data."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import orjson
import yaml

from kvtrace.render.controls import csv_cell


def to_json(document: dict[str, Any]) -> str:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"


class _Dumper(yaml.SafeDumper):
    """Block-style YAML that keeps key order, like kubectl."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 16)


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
