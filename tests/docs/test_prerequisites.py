"""What a reader needs before running the docs' examples is what the README's Quick start lists: every
runnable example calls only programs the Quick start names (or the shell's own builtins)."""

from __future__ import annotations

import re

import pytest

from tests.docs.examples import REPO, examples

#: program -> the words of the Quick start that name it
PROGRAMS = {
    "curl": "`curl`",
    "python3": "Python 3.11",
    ".venv/bin/python": "`.venv`",
    "make": "`make`",
}
#: the shell's builtins and the POSIX tools every machine with a shell and make has
BUILTINS = {"echo", "export", "cd", "test", "true", "printf", "awk", "sed", "grep", "cat", "head", "tail"}
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_ASSIGNMENT = re.compile(r"^(?:[A-Za-z_]\w*=\S*\s*)+")


def quick_start() -> str:
    text = (REPO / "README.md").read_text()
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def programs_of(command: str) -> set[str]:
    """The programs a shell command runs: the first word of each pipeline stage and substitution."""
    bare = _QUOTED.sub("''", command.replace("\\\n", " "))
    found = set()
    for segment in re.split(r"\|\|?|\$\(|&&|;|\(|\)|`", bare):
        words = _ASSIGNMENT.sub("", segment.strip()).split()
        if words:
            found.add(words[0])
    return found


@pytest.mark.parametrize(
    "command,expected",
    [
        ("curl -s localhost:8000/healthz", {"curl"}),
        ("SID=$(curl -s -X POST x -d '{\"a\": 1}' | jq -r .id)", {"curl", "jq"}),
        (
            "SID=$(curl -s x | python3 -c 'import json, sys; print(json.load(sys.stdin)[\"id\"])')",
            {"curl", "python3"},
        ),
    ],
)
def test_the_programs_of_a_command_are_found(command, expected):
    assert programs_of(command) == expected


RUNNABLE = [e for e in examples() if not e.not_runnable]


@pytest.mark.parametrize("example", RUNNABLE, ids=[e.name for e in RUNNABLE])
def test_every_runnable_example_needs_only_what_the_quick_start_lists(example):
    listed = quick_start()
    for step in example.steps:
        for program in programs_of(step.command) - BUILTINS:
            assert program in PROGRAMS, (
                f"{example.name}:{step.line} runs {program}, which the Quick start does not list"
            )
            assert PROGRAMS[program] in listed, (program, PROGRAMS[program])
