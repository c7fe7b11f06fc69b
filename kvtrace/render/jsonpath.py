"""``-o jsonpath=TEMPLATE`` and ``-o custom-columns=SPEC``: a small, honest subset of kubectl's
JSONPath over the ``-o json`` document.

Supported: literal text; ``{.a.b}``; ``{.items[0].x}`` (negative indexes count from the end);
``{.items[*].x}``; ``{$.a}`` (the root); ``{range .items[*]}…{end}`` (inside it, paths start at
each element); ``{"\\n"}``/``{"\\t"}``/``{"text"}`` literals. Several results of one expression
are joined by a space, as kubectl does; a missing field prints nothing. Anything else — filters
``[?()]``, slices ``[1:2]``, unions ``[a,b]``, recursive ``..`` — is a usage error naming this
subset, never a silent wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from kvtrace.errors import UsageError

SUPPORTED = (
    '{.a.b}, {.items[0].x}, {.items[*].x}, {$.a}, {range .items[*]}…{end}, {"\\n"} and literal text'
)
_MISSING = object()
_SEGMENT = re.compile(r"\.([A-Za-z_$][\w$-]*)|\[(\*|-?\d+)\]")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class Path:
    root: bool
    steps: tuple[str | int, ...]  # a key, an index, or "*" (every element)

    def values(self, root: Any, here: Any) -> list[Any]:
        found = [root if self.root else here]
        for step in self.steps:
            found = [v for value in found for v in _step(value, step)]
        return found


@dataclass
class Range:
    path: Path
    body: list[Node] = field(default_factory=list)


Node = str | Path | Range


def _step(value: Any, step: str | int) -> Iterator[Any]:
    if step == "*":
        yield from value.values() if isinstance(value, dict) else (value or [])
    elif isinstance(step, int):
        if isinstance(value, list) and -len(value) <= step < len(value):
            yield value[step]
    elif isinstance(value, dict) and step in value:
        yield value[step]


def _refuse(expression: str, why: str) -> UsageError:
    return UsageError(f"-o jsonpath: {{{expression}}} {why}; kvtrace supports {SUPPORTED}")


def parse_path(expression: str) -> Path:
    """``.a.b[*].c`` (or ``$.a``, or ``.``) as a :class:`Path`; anything else is refused."""
    text = expression.strip()
    root = text.startswith("$")
    rest = text[1:] if root else text
    if rest in ("", "."):
        return Path(root, ())
    if not rest.startswith((".", "[")):
        rest = "." + rest  # kubectl reads {items[0]} as {.items[0]}
    steps: list[str | int] = []
    at = 0
    while at < len(rest):
        found = _SEGMENT.match(rest, at)
        if found is None:
            raise _refuse(expression, _why_not(rest[at:]))
        key, index = found.groups()
        steps.append(key if key is not None else (index if index == "*" else int(index)))
        at = found.end()
    return Path(root, tuple(steps))


def _why_not(rest: str) -> str:
    if rest.startswith(".."):
        return "uses recursive descent (..)"
    if rest.startswith("[?"):
        return "uses a filter ([?()])"
    if rest.startswith("[") and ":" in rest.split("]")[0]:
        return "uses a slice ([a:b])"
    if rest.startswith("[") and "," in rest.split("]")[0]:
        return "uses a union ([a,b])"
    return f"cannot be read at {rest!r}"


def parse_template(template: str) -> list[Node]:
    """The template as literal text, paths and ranges; ``{range}`` without ``{end}`` (or the
    reverse) and unknown expressions are usage errors."""
    top: list[Node] = []
    stack: list[list[Node]] = [top]
    for literal, expression in _pieces(template):
        if literal:
            stack[-1].append(literal)
        if expression is None:
            continue
        word = expression.strip()
        if word.startswith("range ") or word == "range":
            block = Range(parse_path(word[5:]))
            stack[-1].append(block)
            stack.append(block.body)
        elif word == "end":
            if len(stack) == 1:
                raise _refuse(expression, "closes no {range}")
            stack.pop()
        elif _STRING.fullmatch(word):
            stack[-1].append(_unquote(word[1:-1]))
        else:
            stack[-1].append(parse_path(word))
    if len(stack) > 1:
        raise _refuse("range", "is never closed with {end}")
    return top


def _pieces(template: str) -> Iterator[tuple[str, str | None]]:
    at = 0
    while at < len(template):
        start = template.find("{", at)
        if start < 0:
            yield template[at:], None
            return
        end = template.find("}", start)
        if end < 0:
            raise UsageError(
                f"-o jsonpath: unclosed {{ in {template!r}; kvtrace supports {SUPPORTED}"
            )
        yield template[at:start], template[start + 1 : end]
        at = end + 1


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return orjson.dumps(value).decode()


def evaluate(
    nodes: Sequence[Node],
    root: Any,
    here: Any = _MISSING,
    escape: Callable[[str], str] = str,
) -> str:
    """The template's text; ``escape`` is applied to each value from the document (evidence
    is made safe for a terminal), never to the template's own text (a ``{"\\t"}`` stays a
    tab)."""
    here = root if here is _MISSING else here
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, Path):
            out.append(" ".join(escape(_shown(v)) for v in node.values(root, here)))
        else:
            out.extend(
                evaluate(node.body, root, item, escape) for item in node.path.values(root, here)
            )
    return "".join(out)


def jsonpath(template: str, document: Any) -> str:
    """``-o jsonpath=TEMPLATE`` of a document; as in kubectl, no newline is added (end the
    template with ``{"\\n"}`` for one)."""
    return evaluate(parse_template(template), document)


@dataclass(frozen=True)
class Column:
    header: str
    path: Path


def parse_columns(spec: str) -> list[Column]:
    """``NAME:.path,NAME2:{.path}``; each path as in :func:`parse_path`."""
    columns = []
    for part in spec.split(","):
        header, colon, expression = part.partition(":")
        if not colon or not header or not expression.strip():
            raise UsageError(
                f"-o custom-columns: cannot read {part!r}; give HEADER:.path pairs separated "
                "by commas (NAME:.name,VIOLATIONS:.violations)"
            )
        expression = expression.strip()
        if expression.startswith("{") and expression.endswith("}"):
            expression = expression[1:-1]
        columns.append(Column(header, parse_path(expression)))
    return columns


def column_rows(columns: Sequence[Column], document: Any) -> list[list[str]]:
    """One row per element of the document's ``items`` (the document itself when it has none);
    several values join with a comma, a missing one reads ``<none>``, as in kubectl."""
    items = document.get("items") if isinstance(document, dict) else None
    rows = items if isinstance(items, list) else [document]
    return [[_cell(c.path.values(document, row)) for c in columns] for row in rows]


def _cell(values: list[Any]) -> str:
    shown = [_shown(v) for v in values if v is not None]
    return ",".join(shown) if shown else "<none>"
