"""KubeVirt's 2018-era logfmt lines (releases around v0.5–v0.6).

`key=value` and `key="quoted \"escaped\""` pairs; `key=` is an empty value (`kind=` is common).
Mapped into the same schema as JSON and tagged ``era=logfmt``: kind names of that era differ
(`OfflineVirtualMachine`, and `VirtualMachine` meaning today's VMI), so the model must not read
these records unmapped.
"""

from __future__ import annotations

import re

from parsers.draft import Draft
from parsers.klog import unquote
from parsers.kvjson import draft_from_object

SHAPE = "logfmt"
ERA_FLAG = "era=logfmt"
_PAIR = re.compile(r'(?:^|\s)([A-Za-z_][\w.-]*)=("(?:[^"\\]|\\.)*"?|\S*)', re.ASCII)


def looks_like_logfmt(body: str) -> bool:
    """`^level=\\S* `, or both ` timestamp=` and ` pos=` somewhere."""
    if body.startswith("level="):
        return " " in body
    return " timestamp=" in body and " pos=" in body


def _value(token: str) -> str:
    if token.startswith('"'):
        return unquote(token if token.endswith('"') and len(token) > 1 else token + '"')
    return token


def logfmt_draft(body: str) -> Draft | None:
    """The pairs of one logfmt line as a record draft, or None when there are none."""
    pairs = {m.group(1): _value(m.group(2)) for m in _PAIR.finditer(body)}
    if "level" not in pairs and "timestamp" not in pairs:
        return None
    draft = draft_from_object(dict(pairs), SHAPE)
    draft.flags.append(ERA_FLAG)
    return draft
