"""docs/safety.md lists every limit: each KVTRACE_MAX_* variable the code reads is in its table
(and no variable the code does not read)."""

from __future__ import annotations

import re

from tests.conftest import ROOT

CODE_DIRS = ("kvtrace", "parsers")
VARIABLE = re.compile(r'"(KVTRACE_MAX_[A-Z_]+)"')


def _variables_in_code() -> set[str]:
    found: set[str] = set()
    for directory in CODE_DIRS:
        for path in (ROOT / directory).rglob("*.py"):
            found |= set(VARIABLE.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_limit_variable_is_documented_in_one_place():
    documented = set(
        re.findall(r"`(KVTRACE_MAX_[A-Z_]+)`", (ROOT / "docs" / "safety.md").read_text())
    )
    in_code = _variables_in_code()
    assert in_code, "the limits are read from KVTRACE_MAX_* variables"
    assert in_code <= documented, f"not in docs/safety.md: {sorted(in_code - documented)}"
    assert documented <= in_code, f"documented but not read: {sorted(documented - in_code)}"
