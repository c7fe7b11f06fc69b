"""Text from the evidence made safe for a terminal and a spreadsheet.

Log lines and object fields come from strangers. Printed raw, an escape sequence in them acts on
the reader's terminal: OSC 52 writes the clipboard, OSC 8 hides a link, DCS and the 8-bit C1
controls reach the terminal's parser, bidirectional overrides reorder what is shown. Every such
character of a text output is written as a visible escape (``\\x1b``, ``\\x9b``, ``\\u202e``):
the evidence stays readable and exact, and nothing in it is executed. A CSV cell that a
spreadsheet would take for a formula (``=``, ``+``, ``-``, ``@``, tab or carriage return first,
and not a number) gets a leading ``'``.
"""

from __future__ import annotations

import re

# C0 but newline, DEL, C1; the bidirectional embeddings, overrides and isolates; the line and
# paragraph separators (they break a line where the table does not expect it).
_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """``text`` with every control character (newlines kept) written as an escape."""
    return _CONTROLS.sub(_escaped, text)


def csv_cell(value: str) -> str:
    """A CSV cell no spreadsheet evaluates, its controls visible (numbers stay numbers)."""
    formula = value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value)
    return visible_controls("'" + value if formula else value)
