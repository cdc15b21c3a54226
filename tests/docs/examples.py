"""The ``curl`` examples of ``README.md`` and ``docs/*.md``: found, split into steps, and their shown
output read as a pattern.

The conventions a doc follows (the docs' readers see the same text the test reads):

- An *example* is a fenced code block with a ``curl`` command in it. It runs top to bottom in one
  ``bash``, so a variable set by one command (``SID=$(curl ...)``) serves the next ones.
- The ``#`` lines right after a command show what it prints. Prose may come first
  (``# on the demo data ...:``); the output starts at the first line that begins with JSON, an HTTP
  status (``# 201 {...}``) or ``-> ``. A JSON answer after ``#`` on the command's own line counts too.
- In the shown JSON, ``...`` stands for what the doc leaves out: more members of an object, more
  items of a list, or any value; a string ending in ``...`` shows the start of the real string; a
  number shows the real one rounded to the digits written.
- A command with no shown output must answer HTTP status < 400 on every ``curl`` it runs.
- A block that cannot run against ``make demo`` (it needs a cluster, ``kubectl`` ...) says so to the
  reader with a line ``# not runnable here: <why>``, and the test skips it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOT_RUNNABLE = re.compile(r"^\s*#\s*not runnable here:\s*(?P<why>.+)$", re.IGNORECASE)
#: the demo's address as the docs write it (``make demo`` listens on 127.0.0.1:8000)
DEMO_ADDRESS = re.compile(r"(?:https?://)?(?:localhost|127\.0\.0\.1):8000\b")
_CURL = re.compile(r"(?:^|[\s$(|;&])curl\s")
_STATUS = re.compile(r"^(?:->\s*)?(?:(?P<status>[1-5]\d\d)\b\s*)?(?P<rest>.*)$", re.DOTALL)


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass
class Step:
    """One shell command of an example and the output the doc shows for it (if any)."""

    command: str
    line: int
    status: int | None = None
    shown: str | None = None  # the shown JSON text (with ``...``), None when the doc shows none


@dataclass
class Example:
    path: Path
    line: int  # of the opening fence
    text: str
    steps: list[Step] = field(default_factory=list)
    not_runnable: str | None = None

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def fenced_blocks(text: str) -> list[tuple[int, str]]:
    """(line of the opening fence, body) of every fenced block of a Markdown text."""
    blocks, body, start, fence = [], [], 0, None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if fence is None:
            match = re.match(r"^(`{3,}|~{3,})", stripped)
            if match:
                fence, start, body = match.group(1), number, []
        elif stripped.startswith(fence) and stripped.strip("`~") == "":
            blocks.append((start, "\n".join(body)))
            fence = None
        else:
            body.append(line)
    return blocks


def _scan(line: str, state: str) -> tuple[str, int | None]:
    """Shell quoting across one line: the state after it (``""``, ``"'"`` or ``'"'``, or ``"\\"`` for
    a continued line) and the column of an unquoted ``#`` comment, if any."""
    i, quote = 0, state if state in ("'", '"') else ""
    while i < len(line):
        char = line[i]
        if quote == "'":
            if char == "'":
                quote = ""
        elif quote == '"':
            if char == "\\":
                i += 1
            elif char == '"':
                quote = ""
        elif char == "\\":
            if i == len(line) - 1:
                return "\\", None
            i += 1
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t;|&("):
            return "", i
        i += 1
    return quote, None


def _output(comments: list[str]) -> tuple[int | None, str | None]:
    """The status and JSON text shown by a run of ``#`` lines (prose before them is skipped)."""
    texts = [re.sub(r"^\s*#\s?", "", line) for line in comments]
    for index, text in enumerate(texts):
        match = _STATUS.match(text.strip())
        rest = match.group("rest").strip()
        if rest[:1] in ("{", "[") or (match.group("status") and not rest):
            status = int(match.group("status")) if match.group("status") else None
            lines = [rest, *texts[index + 1 :]]
            for end in range(1, len(lines) + 1):  # the JSON ends where it parses; prose may follow
                shown = "\n".join(lines[:end]).strip()
                try:
                    parse_shown(shown)
                except (ValueError, IndexError):
                    continue
                return status, shown
            return status, "\n".join(lines).strip() or None  # fails to parse in the test, saying where
    return None, None


def parse_example(path: Path, line: int, body: str) -> Example:
    example = Example(path=path, line=line, text=body)
    lines = body.splitlines()
    command: list[str] = []
    state, first = "", 0
    index = 0
    while index < len(lines):
        raw = lines[index]
        if not command and NOT_RUNNABLE.match(raw):
            example.not_runnable = NOT_RUNNABLE.match(raw).group("why").strip()
        if not command and (not raw.strip() or raw.lstrip().startswith("#")):
            index += 1
            continue
        if not command:
            first = line + 1 + index
        state, comment_at = _scan(raw, state)
        inline = raw[comment_at:] if comment_at is not None else ""
        command.append(raw[:comment_at] if comment_at is not None else raw)
        index += 1
        if state:  # inside quotes or a continued line
            continue
        step = Step(command="\n".join(command).rstrip(), line=first)
        comments = [inline] if inline else []
        while index < len(lines) and lines[index].lstrip().startswith("#"):
            comments.append(lines[index])
            index += 1
        step.status, step.shown = _output(comments)
        example.steps.append(step)
        command = []
    if command:
        raise ValueError(f"{path.name}:{line}: the block ends inside a quoted string or a continued line")
    return example


def examples(paths: list[Path] | None = None) -> list[Example]:
    """Every example (a fenced block running ``curl``) of the given Markdown files, in file order."""
    found = []
    for path in paths or doc_files():
        for line, body in fenced_blocks(path.read_text()):
            code = [ln for ln in body.splitlines() if not ln.lstrip().startswith("#")]
            if any(_CURL.search(" " + ln) for ln in code):
                found.append(parse_example(path, line, body))
    return found


# -- shown JSON with ``...`` ----------------------------------------------------------------------------------
class Any_:
    """``...`` in the place of a value."""

    def __repr__(self) -> str:
        return "..."


ANY = Any_()
MORE = object()  # ``...`` among the members of an object or the items of a list


@dataclass(frozen=True)
class Prefix:
    text: str


@dataclass(frozen=True)
class Number:
    value: float
    digits: int  # decimals written


class _Parser:
    def __init__(self, text: str):
        self.text, self.at = text, 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{what} at {self.at}: {self.text[self.at : self.at + 40]!r}")

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in " \t\r\n":
            self.at += 1

    def ellipsis(self) -> bool:
        self.skip()
        for token in ("...", "\u2026"):
            if self.text.startswith(token, self.at):
                self.at += len(token)
                return True
        return False

    def value(self):
        if self.ellipsis():
            return ANY
        self.skip()
        char = self.text[self.at : self.at + 1]
        if char == "{":
            return self.sequence("}", member=True)
        if char == "[":
            return self.sequence("]", member=False)
        if char == '"':
            end = self.at + 1
            while self.text[end] != '"':
                end += 2 if self.text[end] == "\\" else 1
            raw, self.at = self.text[self.at : end + 1], end + 1
            text = json.loads(raw)
            if text in ("...", "\u2026"):
                return ANY
            if text.endswith(("...", "\u2026")):
                return Prefix(text.rstrip(".\u2026"))
            return text
        match = re.compile(r"-?\d+(?:\.(\d+))?(?:[eE][-+]?\d+)?|true|false|null").match(self.text, self.at)
        if not match:
            raise self.fail("not JSON")
        self.at = match.end()
        token = match.group(0)
        if match.group(1) is not None:
            return Number(float(token), len(match.group(1)))
        return json.loads(token)

    def sequence(self, close: str, member: bool):
        self.at += 1
        items: list = []
        while True:
            self.skip()
            if self.text.startswith(close, self.at):
                self.at += 1
                return dict(items) if member else items
            if self.ellipsis():
                items.append((MORE, None) if member else MORE)
            elif member:
                key = self.value()
                self.skip()
                if not isinstance(key, str) or self.text[self.at] != ":":
                    raise self.fail("expected a key and ':'")
                self.at += 1
                items.append((key, self.value()))
            else:
                items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif not self.text.startswith(close, self.at):
                raise self.fail(f"expected ',' or {close!r}")


def parse_shown(text: str):
    """The pattern a doc's shown JSON stands for (``...`` as described in the module docstring)."""
    parser = _Parser(text)
    pattern = parser.value()
    parser.skip()
    if parser.at != len(text):
        raise parser.fail("text after the JSON")
    return pattern


def mismatch(pattern, actual, where: str = "$") -> str | None:
    """Why ``actual`` (decoded JSON) is not what ``pattern`` shows, or None when it is."""
    if pattern is ANY:
        return None
    if isinstance(pattern, dict):
        return _object_mismatch(pattern, actual, where)
    if isinstance(pattern, list):
        return _list_mismatch(pattern, actual, where)
    if isinstance(pattern, Prefix):
        ok = isinstance(actual, str) and actual.startswith(pattern.text)
        return None if ok else f"{where}: shown {pattern.text!r}..., got {actual!r}"
    if isinstance(pattern, Number):
        ok = isinstance(actual, int | float) and round(actual, pattern.digits) == pattern.value
        return None if ok else f"{where}: shown {pattern.value}, got {actual!r}"
    if pattern == actual and type(pattern) is type(actual):
        return None
    return f"{where}: shown {pattern!r}, got {actual!r}"


def _object_mismatch(pattern: dict, actual, where: str) -> str | None:
    if not isinstance(actual, dict):
        return f"{where}: shown an object, got {actual!r}"
    keys = set(pattern) - {MORE}
    if keys - set(actual) or (set(actual) - keys and MORE not in pattern):
        return f"{where}: keys shown {sorted(keys)}, got {sorted(actual)}"
    for key in keys:
        if why := mismatch(pattern[key], actual[key], f"{where}.{key}"):
            return why
    return None


def _list_mismatch(pattern: list, actual, where: str) -> str | None:
    if not isinstance(actual, list):
        return f"{where}: shown a list, got {actual!r}"
    if MORE in pattern:  # the items shown before ``...`` start the list, those after it end it
        cut = pattern.index(MORE)
        head, tail = pattern[:cut], [p for p in pattern[cut + 1 :] if p is not MORE]
        if len(actual) < len(head) + len(tail):
            return f"{where}: shown at least {len(head) + len(tail)} items, got {len(actual)}"
        indexes = [*range(len(head)), *range(len(actual) - len(tail), len(actual))]
        pattern = head + tail
    elif len(actual) != len(pattern):
        return f"{where}: shown {len(pattern)} items, got {len(actual)}"
    else:
        indexes = list(range(len(actual)))
    for want, index in zip(pattern, indexes, strict=True):
        if why := mismatch(want, actual[index], f"{where}[{index}]"):
            return why
    return None
