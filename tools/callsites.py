#!/usr/bin/env python3
"""Generate virt-controller's call-site catalog from a kubevirt checkout: every logging call,
its level, verbosity, message format and its ``file:line`` in every release.

    python3 tools/callsites.py --repo /path/to/kubevirt.git          # every tag v0.53.0 … v1.9.x
    python3 tools/callsites.py --repo R --tags v1.10.0 --merge        # add one release
    python3 tools/callsites.py --repo R --check                       # the data is up to date

The repository may be bare (``git clone --bare``, or the mirror the search tool fetches); files
are read with ``git cat-file --batch``, never checked out. The output,
``kvtrace/timeline/callsites.json``, is data — message formats, levels and positions, which are
facts about each release — never KubeVirt code.

What counts as a call site (read from the Go text, not compiled):

- KubeVirt's logger (``kubevirt.io/client-go/log``): a call of ``Info``, ``Infof``, ``Warning``,
  ``Warningf``, ``Error``, ``Errorf``, ``Critical``, ``Criticalf`` on a chain that starts at
  ``log.Log`` or ``log.DefaultLogger()``, or at a variable or field assigned from one. ``V(n)``
  in the chain (or in the variable's assignment) is the call's verbosity; a plain Info is V(2)
  (log.go: ``defaultCurrentVerbosity``). ``pos`` is the line of the call's opening parenthesis.
- klog (client-go's leader election) and glog (older releases' ``pkg/controller``, the same
  header): ``klog.Info…``, ``klog.Error…``, ``klog.Warning…`` and ``klog.V(n).Info…``; their
  verbosity is klog's (0 for a plain call).
- Go's standard logger as virt-controller's main wires it (``golog.Printf``, ``golog.Fatal``…):
  printed through the adapter at level info, whose ``pos`` is always ``stdlib.go:105``.

Formats: string literals, ``+`` concatenations and the package's string constants are resolved;
an argument that is a resolvable constant is put into its ``%s``/``%v`` verb. What cannot be
resolved stays a verb (``%v``) or, for a whole format, ``None`` (such a site is known by its pos
alone). Sites whose receiver the script cannot place are listed on stderr, never dropped
silently.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "kvtrace" / "timeline" / "callsites.json"
FIRST = (0, 53, 0)
ROOTS = ("pkg/virt-controller/", "cmd/virt-controller/", "pkg/controller/", "pkg/storage/")
VENDORED = ("vendor/k8s.io/client-go/tools/leaderelection/",)

KV_METHODS = {
    "Info": "info",
    "Infof": "info",
    "Warning": "warning",
    "Warningf": "warning",
    "Error": "error",
    "Errorf": "error",
    "Critical": "fatal",
    "Criticalf": "fatal",
}
KLOG_METHODS = {
    "Info": "info",
    "Infof": "info",
    "InfoS": "info",
    "Warning": "warning",
    "Warningf": "warning",
    "Error": "error",
    "Errorf": "error",
    "ErrorS": "error",
}
CALL = re.compile(r"\.\s*(" + "|".join(sorted(set(KV_METHODS) | set(KLOG_METHODS))) + r")\s*\(")
VERB = re.compile(r"%[-+# 0]*\d*(?:\.\d+)?[vTtbcdoOqxXUeEfFgGsp%]")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KV_ROOT = re.compile(r"^(?:log\.Log|log\.DefaultLogger\(\))")


@dataclass
class Site:
    file: str  # basename, as in ``pos``
    path: str
    line: int
    level: str
    verbosity: int | None  # None: Warning/Error/Fatal, always printed
    logger: str  # "kubevirt" | "klog" | "stdlib"
    format: str | None
    printf: bool


# --- Go text ---------------------------------------------------------------------------------
def blank_comments(src: str) -> str:
    """The source with comments blanked out (newlines kept), strings untouched."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            end = src.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif c == "/" and src.startswith("/*", i):
            end = src.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in src[i:end]))
            i = end
        elif c in "\"'`":
            end = _string_end(src, i)
            out.append(src[i:end])
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _string_end(src: str, i: int) -> int:
    quote, j = src[i], i + 1
    while j < len(src):
        if src[j] == "\\" and quote != "`":
            j += 2
            continue
        if src[j] == quote:
            return j + 1
        if src[j] == "\n" and quote != "`":
            return j
        j += 1
    return j


def args_of(src: str, open_paren: int) -> tuple[list[str], int]:
    """The top-level arguments of the call whose ``(`` is at ``open_paren``."""
    depth, start, args, i = 0, open_paren + 1, [], open_paren
    while i < len(src):
        c = src[i]
        if c in "\"'`":
            i = _string_end(src, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(src[start:i].strip())
                return [a for a in args if a], i
        elif c == "," and depth == 1:
            args.append(src[start:i].strip())
            start = i + 1
        i += 1
    return args, i


def receiver_of(src: str, dot: int) -> str:
    """The chain before ``.Method(``: identifiers, dots and balanced (…) groups, read backwards."""
    i, depth = dot - 1, 0
    while i >= 0:
        c = src[i]
        if depth:
            if c == ")":
                depth += 1
            elif c == "(":
                depth -= 1
        elif c == ")":
            depth = 1
        elif not (c.isalnum() or c in "_.") and not (c.isspace() and _dot_follows(src, i)):
            break
        i -= 1
    return re.sub(r"\s+", "", src[i + 1 : dot])


def _dot_follows(src: str, i: int) -> bool:
    """Whitespace inside a chain: a line ending in ``.`` continues on the next one."""
    j = i
    while j >= 0 and src[j].isspace():
        j -= 1
    return j >= 0 and src[j] == "."


# --- strings and constants -------------------------------------------------------------------
def go_string(literal: str) -> str | None:
    if literal.startswith("`") and literal.endswith("`") and len(literal) >= 2:
        return literal[1:-1]
    if literal.startswith('"') and literal.endswith('"') and len(literal) >= 2:
        try:
            value: str = json.loads(literal)
            return value
        except ValueError:
            return literal[1:-1]
    return None


CONST = re.compile(
    r"^\s*(?P<name>[A-Za-z_]\w*)\s*(?:string\s*)?=\s*(?P<value>(?:\"(?:[^\"\\\n]|\\.)*\"|`[^`]*`|[A-Za-z_]\w*(?=\s*\+))"
    r"(?:\s*\+\s*(?:\"(?:[^\"\\\n]|\\.)*\"|`[^`]*`|[A-Za-z_]\w*))*)\s*$",
    re.M,
)


def constants(sources: list[str]) -> dict[str, str]:
    """The package's string constants (``name = "…"``, in const or var blocks or alone)."""
    raw: dict[str, str] = {}
    for src in sources:
        for found in CONST.finditer(src):
            raw.setdefault(found["name"], found["value"])
    resolved: dict[str, str] = {}
    for _ in range(3):  # constants built from constants
        for name, value in raw.items():
            text = resolve(value, resolved)
            if text is not None:
                resolved[name] = text
    return resolved


def resolve(expr: str, consts: dict[str, str]) -> str | None:
    """A string expression of literals, constants and ``+``; None if anything else."""
    parts, out = _split_plus(expr), []
    for part in parts:
        text = go_string(part) if part[:1] in '"`' else consts.get(part)
        if text is None:
            return None
        out.append(text)
    return "".join(out)


def _split_plus(expr: str) -> list[str]:
    parts, start, i = [], 0, 0
    while i < len(expr):
        if expr[i] in '"`':
            i = _string_end(expr, i)
            continue
        if expr[i] in "([{":
            return [expr.strip()]
        if expr[i] == "+":
            parts.append(expr[start:i].strip())
            start = i + 1
        i += 1
    parts.append(expr[start:].strip())
    return parts


def fill(fmt: str, args: list[str], consts: dict[str, str]) -> str:
    """Put each argument that is a resolvable string into its ``%s``/``%v`` verb."""
    out, at, index = [], 0, 0
    for verb in VERB.finditer(fmt):
        out.append(fmt[at : verb.start()])
        at = verb.end()
        if verb.group() == "%%":
            out.append("%%")
            continue
        value = resolve(args[index], consts) if index < len(args) else None
        index += 1
        if value is not None and verb.group() in ("%s", "%v") and "%" not in value:
            out.append(value)
        else:
            out.append(verb.group())
    out.append(fmt[at:])
    return "".join(out)


# --- one file --------------------------------------------------------------------------------
def line_at(src: str, offset: int) -> int:
    return src.count("\n", 0, offset) + 1


def logger_vars(src: str) -> dict[str, int | None]:
    """Variables and fields assigned from the KubeVirt logger, with a V(n) in the assignment."""
    found: dict[str, int | None] = {}
    for m in re.finditer(
        r"([A-Za-z_][\w.]*)\s*:?=\s*(log\.Log|log\.DefaultLogger\(\))([^\n]*)", src
    ):
        verbosity = re.search(r"\.V\((\d+)\)", m.group(3))
        found[m.group(1).split(".")[-1]] = int(verbosity.group(1)) if verbosity else None
    for m in re.finditer(r"\b([a-z]\w*)\s+\*log\.FilteredLogger\b", src):
        found.setdefault(m.group(1), None)
    return found


def sites_in(path: str, src: str, consts: dict[str, str]) -> tuple[list[Site], list[str]]:
    code = blank_comments(src)
    loggers = logger_vars(code)
    sites, unplaced = [], []
    for call in CALL.finditer(code):
        method, paren = call.group(1), call.end() - 1
        receiver = receiver_of(code, call.start())
        site = _site(path, code, receiver, method, paren, loggers, consts)
        if site is None:
            if _looks_like_logging(receiver, method):
                unplaced.append(f"{path}:{line_at(code, paren)} {receiver}.{method}")
            continue
        sites.append(site)
    sites.extend(_stdlib_sites(path, code, consts))
    return sites, unplaced


def _site(
    path: str,
    code: str,
    receiver: str,
    method: str,
    paren: int,
    loggers: dict[str, int | None],
    consts: dict[str, str],
) -> Site | None:
    verbosity = re.findall(r"\.V\((\d+)\)", receiver)
    direct = KV_ROOT.match(receiver) is not None
    if receiver.startswith(("klog", "glog")) and method in KLOG_METHODS:
        logger, level = "klog", KLOG_METHODS[method]
        v: int | None = int(verbosity[-1]) if verbosity else 0
    elif method in KV_METHODS and (direct or _last_field(receiver) in loggers):
        logger, level = "kubevirt", KV_METHODS[method]
        inherited = None if direct else loggers.get(_last_field(receiver))
        fallback = 2 if inherited is None else inherited  # a plain Info is V(2)
        v = int(verbosity[-1]) if verbosity else fallback
    else:
        return None
    args, _ = args_of(code, paren)
    printf = method.endswith("f")
    fmt = resolve(args[0], consts) if args else None
    if fmt is not None and printf:
        fmt = fill(fmt, args[1:], consts)
    if level != "info":
        v = None if logger == "kubevirt" else v
    base = path.rsplit("/", 1)[-1]
    return Site(base, path, line_at(code, paren), level, v, logger, fmt, printf)


def _last_field(receiver: str) -> str:
    head = re.split(r"\.(?:V|Object|Reason|With|Level|Key|ObjectRef)\(", receiver, maxsplit=1)[0]
    return head.split(".")[-1]


def _looks_like_logging(receiver: str, method: str) -> bool:
    """A call that might be a logger's, though the script cannot tell whose."""
    if not receiver or receiver.startswith(("fmt", "errors", "t.", "e.", "err", "g.", "k8serrors")):
        return False
    return "log" in receiver.lower() and method in KV_METHODS


STDLIB = re.compile(r"\bgolog\.(Printf|Println|Print|Fatalf|Fatalln|Fatal)\s*\(")


def _stdlib_sites(path: str, code: str, consts: dict[str, str]) -> list[Site]:
    out = []
    for call in STDLIB.finditer(code):
        paren = call.end() - 1
        args, _ = args_of(code, paren)
        fmt = resolve(args[0], consts) if args else None
        if fmt is not None and call.group(1) in ("Printf", "Fatalf"):
            fmt = fill(fmt, args[1:], consts)
        base = path.rsplit("/", 1)[-1]
        out.append(Site(base, path, line_at(code, paren), "info", 2, "stdlib", fmt, True))
    return out


# --- releases --------------------------------------------------------------------------------
def version_key(tag: str) -> tuple[int, int, int]:
    major, minor, patch = (int(x) for x in tag.lstrip("v").split("."))
    return major, minor, patch


def release_tags(repo: str) -> list[str]:
    tags = git(repo, "tag", "--list", "v*").split()
    plain = [t for t in tags if re.fullmatch(r"v\d+\.\d+\.\d+", t)]
    return sorted((t for t in plain if version_key(t) >= FIRST), key=version_key)


def git(repo: str, *argv: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, *argv], check=True, capture_output=True, text=True
    ).stdout


def go_files(repo: str, tag: str) -> list[str]:
    listed = git(repo, "ls-tree", "-r", "--name-only", tag, "--", *ROOTS, *VENDORED).split("\n")
    return [p for p in listed if p.endswith(".go") and not p.endswith("_test.go")]


def read_blobs(repo: str, tag: str, paths: list[str]) -> dict[str, str]:
    request = "".join(f"{tag}:{path}\n" for path in paths).encode()
    done = subprocess.run(
        ["git", "-C", repo, "cat-file", "--batch"], input=request, capture_output=True, check=True
    )
    data, out, at = done.stdout, {}, 0
    for path in paths:
        header_end = data.index(b"\n", at)
        size = int(data[at:header_end].split()[2])
        out[path] = data[header_end + 1 : header_end + 1 + size].decode("utf-8", "replace")
        at = header_end + 1 + size + 1
    return out


def release_sites(repo: str, tag: str) -> tuple[list[Site], list[str]]:
    blobs = read_blobs(repo, tag, go_files(repo, tag))
    by_dir: dict[str, list[str]] = {}
    for path, src in blobs.items():
        by_dir.setdefault(path.rsplit("/", 1)[0], []).append(blank_comments(src))
    consts = {d: constants(srcs) for d, srcs in by_dir.items()}
    sites, unplaced = [], []
    for path, src in sorted(blobs.items()):
        found, lost = sites_in(path, src, consts[path.rsplit("/", 1)[0]])
        sites.extend(found)
        unplaced.extend(lost)
    return sites, unplaced


# --- the catalog -----------------------------------------------------------------------------
def site_identity(site: Site, ordinal: int) -> str:
    return json.dumps(
        [site.file, site.logger, site.level, site.verbosity, site.format, ordinal],
        ensure_ascii=False,
    )


def identities(sites: list[Site]) -> Iterator[tuple[str, Site]]:
    """Sites keyed across releases by what they print; identical ones in a file by order."""
    seen: dict[tuple[object, ...], int] = {}
    for site in sorted(sites, key=lambda s: (s.path, s.line)):
        key = (site.file, site.logger, site.level, site.verbosity, site.format)
        ordinal = seen.get(key, 0)
        seen[key] = ordinal + 1
        yield site_identity(site, ordinal), site


def build(repo: str, tags: list[str], previous: dict[str, object] | None) -> dict[str, object]:
    releases: list[str] = list(previous["releases"]) if previous else []  # type: ignore[call-overload]
    table: dict[str, dict[str, object]] = {}
    if previous:
        for entry in previous["sites"]:  # type: ignore[attr-defined]
            table[_key_of(entry)] = entry
    for tag in tags:
        sites, unplaced = release_sites(repo, tag)
        for line in unplaced:
            print(f"{tag}: not placed: {line}", file=sys.stderr)
        if tag not in releases:
            releases.append(tag)
        for identity, site in identities(sites):
            entry = table.setdefault(identity, _entry(site, identity))
            positions: dict[str, int] = entry["positions"]  # type: ignore[assignment]
            positions[tag] = site.line
        print(f"{tag}: {len(sites)} call sites", file=sys.stderr)
    releases.sort(key=version_key)
    ordered = sorted(table.values(), key=lambda e: (str(e["file"]), str(e["format"]), _key_of(e)))
    for entry in ordered:
        positions = entry["positions"]  # type: ignore[assignment]
        entry["positions"] = dict(sorted(positions.items(), key=lambda kv: version_key(kv[0])))
    return {"generatedBy": "tools/callsites.py", "releases": releases, "sites": ordered}


def _entry(site: Site, identity: str) -> dict[str, object]:
    return {
        "file": site.file,
        "logger": site.logger,
        "level": site.level,
        "verbosity": site.verbosity,
        "format": site.format,
        "printf": site.printf,
        "ordinal": json.loads(identity)[-1],
        "positions": {},
    }


def _key_of(entry: dict[str, object]) -> str:
    return json.dumps(
        [
            entry["file"],
            entry["logger"],
            entry["level"],
            entry["verbosity"],
            entry["format"],
            entry["ordinal"],
        ],
        ensure_ascii=False,
    )


def render(catalog: dict[str, object]) -> str:
    """One site per line: diffs between regenerations stay readable."""
    lines = ["{", f'"generatedBy": {json.dumps(catalog["generatedBy"])},']
    lines.append(f'"releases": {json.dumps(catalog["releases"])},')
    lines.append('"sites": [')
    sites: list[dict[str, object]] = catalog["sites"]  # type: ignore[assignment]
    for i, entry in enumerate(sites):
        comma = "," if i < len(sites) - 1 else ""
        lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + comma)
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repo", required=True, help="a kubevirt git repository (bare is fine)")
    ap.add_argument("--tags", nargs="*", help="releases to read (default: every v0.53.0+ tag)")
    ap.add_argument("--merge", action="store_true", help="add to the existing catalog")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="exit 1 if --out is not up to date")
    args = ap.parse_args()
    tags = args.tags or release_tags(args.repo)
    previous = json.loads(args.out.read_text()) if args.merge and args.out.exists() else None
    text = render(build(args.repo, tags, previous))
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        print("up to date" if current == text else f"{args.out} is stale", file=sys.stderr)
        return 0 if current == text else 1
    args.out.write_text(text, encoding="utf-8")
    print(
        f"{args.out}: {len(json.loads(text)['sites'])} sites ({len(tags)} release(s) read)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
