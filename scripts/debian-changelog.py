#!/usr/bin/env python3
"""Writes debian/changelog from CHANGELOG.md, so the Debian package's history is the project's own.

CHANGELOG.md (Keep a Changelog: `## [VERSION] - YYYY-MM-DD` sections with `### Added`/`### Changed`/… lists) is
the one place a release's changes are written; the Debian changelog is derived from it and never edited by hand.

    scripts/debian-changelog.py > debian/changelog                  # write it
    scripts/debian-changelog.py --check debian/changelog            # exit 1 when it is out of date (CI)
    scripts/debian-changelog.py path/to/CHANGELOG.md                # another file (default: the checkout's)

What it writes, one Debian entry per version section, newest first:

- a dated section `## [1.2.0] - 2027-03-01` is `aulos (1.2.0) unstable; urgency=medium`, signed at 12:00:00 +0000
  on that day;
- an unreleased section is kept only when its heading names a version (`## [0.2.0] - unreleased`, or
  `## [Unreleased] - 0.2.0`): it becomes that version with the distribution UNRELEASED; a bare `## [Unreleased]`
  is skipped;
- a SemVer pre-release (`1.0.0-rc.1`) becomes `1.0.0~rc.1`, which Debian sorts before `1.0.0` as SemVer does.
  The package is native (no Debian revision) unless `--revision N` asks for `-N`;
- the body is the section's first paragraph's first sentence, then each `### Group` as `  * Group:` with its
  items as `    - ` lines: the first sentence of each item (with the item's trailing issue numbers, such as
  "(14, 29)", kept), Markdown markup removed, wrapped at 80 columns.

An undated section needs a date all the same. It is, in order: `--date YYYY-MM-DD`, $SOURCE_DATE_EPOCH (which
dpkg-buildpackage sets from this very file, so a rebuild writes the same thing), else UNDATED_FALLBACK below, so
that the output, and `--check`, never depend on the day it is run.

The maintainer is MAINTAINER below (CHANGELOG.md and README.md name none); `--maintainer "Name <email>"` overrides it.
Errors (a missing or malformed CHANGELOG.md) are one line on stderr and exit status 2.
"""

import argparse
import datetime
import os
import re
import sys
import textwrap

PACKAGE = "aulos"
MAINTAINER = "Aulos developers <aulos@users.noreply.github.com>"
URGENCY = "medium"
RELEASED_DISTRIBUTION = "unstable"
UNRELEASED_DISTRIBUTION = "UNRELEASED"
# The date of an undated section when neither --date nor SOURCE_DATE_EPOCH gives one: a fixed day (the day this
# script was written), so the output is the same on every machine and every day.
UNDATED_FALLBACK = "2026-11-27"
WIDTH = 80  # Debian's changelog lines are at most 80 columns (lintian: debian-changelog-line-too-long).

DEFAULT_CHANGELOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "CHANGELOG.md")

# `## [0.2.0] - 2026-11-27`, `## 0.2.0 - 2026-11-27`, `## [0.2.0] - unreleased`, `## [Unreleased]`, …
SECTION = re.compile(r"^##\s+(?P<title>.+?)\s*$")
SUBSECTION = re.compile(r"^###\s+(?P<title>.+?)\s*$")
VERSION = re.compile(r"\bv?(?P<version>\d+(?:\.\d+)+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)")
DATE = re.compile(r"\b(?P<date>\d{4}-\d{2}-\d{2})\b")
BULLET = re.compile(r"^[-*+]\s+(?P<text>.*)$")
LINK_DEFINITION = re.compile(r"^\[[^\]]+\]:\s+\S+")
ISSUES = re.compile(r"\s*\((?:\d+(?:,\s*\d+)*)\)\.?\s*$")  # an item's trailing "(14, 29)."


class ChangelogError(Exception):
    """A problem with the input, reported as one line."""


class Section:
    """One `## ` section of CHANGELOG.md: its version, date, prose and grouped items."""

    def __init__(self, heading, line_number):
        self.heading = heading
        self.line_number = line_number
        self.paragraphs = []  # prose before the first item, each a list of lines
        self.groups = []  # [(group title or None, [item text, …])]

    def current_items(self):
        """The item list new bullets go into (an untitled group when no `###` came yet)."""
        if not self.groups:
            self.groups.append((None, []))
        return self.groups[-1][1]


def parse(text, path):
    """Splits CHANGELOG.md into Sections; text before the first `## ` (the title and preamble) is ignored."""
    sections = []
    section = None
    item = None  # the lines of the bullet being read, or None
    paragraph = None  # the lines of the prose paragraph being read, or None
    in_fence = False

    def finish():
        nonlocal item, paragraph
        if item is not None:
            section.current_items().append(" ".join(item))
        if paragraph is not None:
            section.paragraphs.append(" ".join(paragraph))
        item = paragraph = None

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if line.lstrip().startswith("```"):
            in_fence = not in_fence  # code blocks say nothing a changelog entry needs
            continue
        if in_fence:
            continue
        heading = SECTION.match(line)
        if heading:
            if section is not None:
                finish()
            section = Section(heading.group("title"), number)
            sections.append(section)
            continue
        if section is None or LINK_DEFINITION.match(line):
            continue
        sub = SUBSECTION.match(line)
        if sub:
            finish()
            section.groups.append((sub.group("title"), []))
            continue
        if not line.strip():
            finish()
            continue
        bullet = BULLET.match(line)
        if bullet:  # a top-level item (an indented one is a continuation or a nested item: folded into it)
            finish()
            item = [bullet.group("text").strip()]
        elif item is not None:
            item.append(BULLET.sub(r"\g<text>", line.strip()))
        elif paragraph is not None:
            paragraph.append(line.strip())
        elif not section.groups:
            paragraph = [line.strip()]
        # else: prose between a group's items; it is not a change of its own, so it is left out.
    if in_fence:
        raise ChangelogError(f"{path}: a code block (```) is never closed")
    if section is not None:
        finish()
    return sections


def plain(text):
    """Markdown inline markup removed: links keep their text, code and emphasis their words."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) and images
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)  # [text][reference]
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])", r"\1", text)
    text = re.sub(r"<(https?://[^>]+)>", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def first_sentence(text):
    """The text up to the end of its first sentence: a '.', '!' or '?' outside parentheses followed by a space.

    An item's trailing issue numbers, "(14, 29).", are kept when the rest is cut off: they say where to read more.
    """
    depth = 0
    for index, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif char in ".!?" and depth == 0 and text[index + 1:index + 2] == " ":
            # "e.g. x" and "i.e. x" are not ends of sentences; a capital, a digit or markup starting the next is.
            following = text[index + 2:index + 3]
            if re.match(r"[A-Z0-9`*(\"“]", following) and not re.search(r"\b(?:e\.g|i\.e|etc|vs)$", text[:index]):
                sentence = text[:index + 1]
                issues = ISSUES.search(text)
                if issues and not ISSUES.search(sentence):
                    sentence = sentence[:-1] + " " + issues.group(0).strip().rstrip(".") + sentence[-1]
                return sentence
    return text


def debian_version(version, revision, where):
    """A SemVer version as a Debian version: pre-release after '~', and '-REVISION' when asked for."""
    if not re.fullmatch(r"\d[0-9A-Za-z.+~-]*", version):
        raise ChangelogError(f"{where}: '{version}' is not a version Debian can use")
    base, _, build = version.partition("+")
    release, dash, prerelease = base.partition("-")
    result = release + ("~" + prerelease if dash else "") + ("+" + build if build else "")
    return result + (f"-{revision}" if revision else "")


def rfc2822(day, where):
    """YYYY-MM-DD at noon UTC, as debian/changelog wants it: 'Fri, 27 Nov 2026 12:00:00 +0000'."""
    try:
        date = datetime.datetime.strptime(day, "%Y-%m-%d").replace(hour=12, tzinfo=datetime.timezone.utc)
    except ValueError:
        raise ChangelogError(f"{where}: '{day}' is not a date (YYYY-MM-DD)") from None
    return date.strftime("%a, %d %b %Y %H:%M:%S +0000")  # %a and %b are English: Python's "C" locale default


def undated_day(option):
    """The day an undated section is signed on: --date, else $SOURCE_DATE_EPOCH, else UNDATED_FALLBACK."""
    if option:
        return option
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            moment = datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc)
        except (ValueError, OverflowError, OSError):
            raise ChangelogError(f"SOURCE_DATE_EPOCH: '{epoch}' is not a number of seconds") from None
        return moment.strftime("%Y-%m-%d")
    return UNDATED_FALLBACK


# Spaces a line is not broken at: inside an item's trailing issue numbers, "(14, 29)", and between a number and
# its unit, "−90 dBFS". They are held as GLUE (a character textwrap does not break at) while wrapping.
GLUE = "\x00"
UNBREAKABLE = re.compile(r"\((?:\d+, )+\d+\)|\d (?:dB\w*|[KMG]iB|k?Hz|ms|s)\b")


def wrapped(text, first, rest):
    """`text` wrapped at WIDTH columns, the first line after `first`, the others after `rest`."""
    text = UNBREAKABLE.sub(lambda match: match.group(0).replace(" ", GLUE), text)
    lines = textwrap.wrap(text, width=WIDTH, initial_indent=first, subsequent_indent=rest,
                          break_long_words=False, break_on_hyphens=False)
    return [line.replace(GLUE, " ") for line in lines]


def entry(section, path, options):
    """One debian/changelog entry for a Section, or None when it is an unreleased section without a version."""
    where = f"{path}:{section.line_number}"
    title = section.heading
    unreleased = re.search(r"\bunreleased\b", title, re.IGNORECASE) is not None
    version = VERSION.search(title)
    if version is None:
        if unreleased:
            return None
        raise ChangelogError(f"{where}: the heading '## {title}' names no version")
    date = DATE.search(title)
    if date is None and not unreleased:
        raise ChangelogError(f"{where}: the heading '## {title}' has no date (YYYY-MM-DD) and is not 'unreleased'")
    day = date.group("date") if date else undated_day(options.date)

    lines = [f"{PACKAGE} ({debian_version(version.group('version'), options.revision, where)}) "
             f"{UNRELEASED_DISTRIBUTION if unreleased else RELEASED_DISTRIBUTION}; urgency={URGENCY}", ""]
    body = []
    if section.paragraphs:
        body += wrapped(first_sentence(plain(section.paragraphs[0])), "  * ", "    ")
    for group, items in section.groups:
        if not items:
            continue
        if group is None:
            for item in items:
                body += wrapped(first_sentence(plain(item)), "  * ", "    ")
        else:
            body += wrapped(plain(group) + ":", "  * ", "    ")
            for item in items:
                body += wrapped(first_sentence(plain(item)), "    - ", "      ")
    if not body:
        body = ["  * No changes recorded."]  # an entry needs at least one change line
    lines += body
    lines += ["", f" -- {options.maintainer}  {rfc2822(day, where)}", ""]
    return "\n".join(lines)


def render(path, options):
    """The whole debian/changelog for CHANGELOG.md at `path`."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise ChangelogError(f"{path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ChangelogError(f"{path}: not UTF-8 text") from None
    entries = [e for e in (entry(s, path, options) for s in parse(text, path)) if e is not None]
    if not entries:
        raise ChangelogError(f"{path}: no version sections ('## [VERSION] - YYYY-MM-DD')")
    return "\n".join(entries)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("changelog", nargs="?", default=DEFAULT_CHANGELOG,
                        help="the Keep a Changelog file (default: CHANGELOG.md of this checkout)")
    parser.add_argument("--check", metavar="FILE",
                        help="compare FILE with what would be written: exit 0 when equal, 1 when not")
    parser.add_argument("--date", metavar="YYYY-MM-DD", help="the date of an undated (unreleased) section")
    parser.add_argument("--maintainer", default=MAINTAINER, help=f"'Name <email>' (default: {MAINTAINER})")
    parser.add_argument("--revision", help="a Debian revision appended to every version as -REVISION "
                                           "(default: none, a native package)")
    options = parser.parse_args()
    if not re.fullmatch(r"[^<>]+ <[^<>@\s]+@[^<>\s]+>", options.maintainer):
        parser.error(f"--maintainer: '{options.maintainer}' is not 'Name <email>'")
    if options.revision is not None and not re.fullmatch(r"[0-9A-Za-z.+~]+", options.revision):
        parser.error(f"--revision: '{options.revision}' is not a Debian revision")
    name = os.path.relpath(options.changelog) if options.changelog == DEFAULT_CHANGELOG else options.changelog
    try:
        if options.date:
            rfc2822(options.date, "--date")
        output = render(name, options)
    except ChangelogError as error:
        print(f"debian-changelog.py: {error}", file=sys.stderr)
        return 2

    if options.check is None:
        sys.stdout.write(output)
        return 0
    try:
        with open(options.check, encoding="utf-8") as file:
            current = file.read()
    except (OSError, UnicodeDecodeError):
        current = None
    if current != output:
        print(f"{options.check} is out of date: run scripts/debian-changelog.py > {options.check}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
