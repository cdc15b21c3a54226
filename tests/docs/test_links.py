"""The docs stand alone: every relative link in ``README.md`` and ``docs/*.md`` reaches a file of the
repository (and a heading, when it names one), and no page sends the reader to a document that is not
here or to an issue tracker entry.

A newcomer's path on a fresh clone is ``make demo``, then the README's first links: those pages must
exist, link onwards only to what exists, and (``test_examples.py``) their examples run on the demo.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.examples import REPO, doc_files, fenced_blocks

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside fenced blocks (a link inside a code example is not a link)."""
    for _, body in fenced_blocks(text):
        text = text.replace(body, "")
    return text


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"`|\*\*|__", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in _prose(path.read_text()).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            found.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
    return found


def links(path: Path) -> list[str]:
    return [a or b for a, b in LINK.findall(_prose(path.read_text()))]


def _broken(path: Path, target: str) -> str | None:
    if re.match(r"^[a-z]+:", target):  # http(s), mailto: not checked here
        return None
    file_part, _, anchor = target.partition("#")
    destination = (path.parent / file_part).resolve() if file_part else path
    if not destination.exists():
        return f"{target}: no such file"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{target}: no heading #{anchor} in {destination.relative_to(REPO)}"
    return None


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("## Upstream CA: pods it cannot see", "upstream-ca-pods-it-cannot-see"),
        ("## Quick start", "quick-start"),
        ("### Scores: which card, and which node", "scores-which-card-and-which-node"),
        ("## `make demo` and `HAMI_SIM_X`", "make-demo-and-hami_sim_x"),
    ],
)
def test_slug_follows_github(heading, anchor):
    assert slug(heading.lstrip("#")) == anchor


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_reaches_a_file_and_heading(path):
    broken = [why for target in links(path) if (why := _broken(path, target))]
    assert not broken, broken


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_page_sends_readers_outside_the_repository_docs(path):
    text = path.read_text()
    assert not re.search(r"design\.md|device-model\.md|\.\./shared", text)
    assert not re.search(r"\b[Ii]ssues? #?\d+\b", text), "docs name no tracker issue"


def test_the_newcomers_first_three_links_exist_and_lead_on():
    readme = REPO / "README.md"
    first = []
    for target in links(readme):
        page = target.partition("#")[0]
        if page.endswith(".md") and page not in first:
            first.append(page)
    assert len(first) >= 3
    for page in first[:3]:
        path = (REPO / page).resolve()
        assert path.exists(), page
        assert links(path), f"{page} links nowhere onwards"
        assert not [why for target in links(path) if (why := _broken(path, target))]
