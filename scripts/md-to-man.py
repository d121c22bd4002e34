#!/usr/bin/env python3
"""Turns a Markdown document into a man page (troff with the man macros) on standard output.

The documentation is written once, in Markdown under docs/; the installed manual pages that are documents rather
than command references (aulos-rig(5), the rig file format, from docs/rigs.md) are made from it at build time:

    scripts/md-to-man.py docs/rigs.md --name aulos-rig --section 5 --title "Aulos rig files" > aulos-rig.5

It reads the Markdown the project writes, not all of CommonMark:

- `#` gives the page its NAME line (`--title`, or the heading's text, is the description after the name); what
  comes before the first `##` is the DESCRIPTION; `##` is a section (.SH, in capitals), `###` a subsection (.SS),
  deeper headings a bold line;
- paragraphs (one output line each: troff fills them, nothing is wrapped here), bullet and numbered lists, nested
  by indentation, with paragraphs and code blocks inside items, and block quotes;
- fenced code blocks, verbatim in .EX/.EE;
- pipe tables, as tbl(1) tables (the page then starts with `'\\" t`, so man runs tbl);
- `code` in bold, *emphasis* in italics, **strong** in bold, links as their text followed by the address in angle
  brackets (absolute URLs) or by the file they point to in parentheses (relative links to other documents).

Everything troff would otherwise read as a request or an escape is escaped: backslashes, a line's leading '.' or
"'", '-' as \\- wherever it is not a hyphen inside a word (options, negative numbers, code), and every character
outside ASCII, by its troff name where groff has one (\\(em, \\(->, \\(mu, …), else as \\[uXXXX]; a few have
plain-ASCII spellings instead ("..." for an ellipsis, '#' and 'b' for sharp and flat).

The page's date is --date, else $SOURCE_DATE_EPOCH (reproducible builds), else today. Errors are one line on
stderr and exit status 2.
"""

import argparse
import os
import re
import sys

from troff import escape, fallbacks, page_date, quoted

# Section names man(7) pages conventionally carry in their .TH line's fifth field.
MANUALS = {"1": "User Commands", "4": "Devices", "5": "File Formats Manual", "7": "Miscellaneous Information Manual",
           "8": "System Manager's Manual"}

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`]*)$")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$")
LIST_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])( +|$)(.*)$")
RULE = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
QUOTE = re.compile(r"^ {0,3}> ?(.*)$")
TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
HTML_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")


class MarkdownError(Exception):
    """A problem with the input, reported as one line."""


# ---------------------------------------------------------------------------------------------------------------
# Blocks: the document as a tree of headings, paragraphs, lists, code, tables and quotes.
# ---------------------------------------------------------------------------------------------------------------

def parse_blocks(lines, first_line=1):
    """Parses `lines` (already stripped of any container's indentation) into a list of blocks:

    ("heading", level, text), ("paragraph", text), ("code", [lines]), ("rule",), ("quote", [blocks]),
    ("list", ordered, start, [[blocks of an item], …]), ("table", [alignments], header cells, [rows of cells]).
    """
    blocks = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip() or HTML_COMMENT.match(line):
            index += 1
            continue
        fence = FENCE.match(line)
        if fence:
            indent, marker = len(fence.group(1)), fence.group(2)
            body = []
            index += 1
            while index < len(lines):
                closing = lines[index].strip()
                if closing.startswith(marker[0] * len(marker)) and not closing.strip(marker[0]):
                    break
                body.append(strip_indent(lines[index], indent))
                index += 1
            else:
                raise MarkdownError(f"line {first_line + index - len(body) - 1}: a code block is never closed")
            blocks.append(("code", body))
            index += 1
            continue
        heading = HEADING.match(line)
        if heading:
            blocks.append(("heading", len(heading.group(1)), (heading.group(2) or "").strip()))
            index += 1
            continue
        if RULE.match(line):
            blocks.append(("rule",))
            index += 1
            continue
        if QUOTE.match(line):
            quoted = []
            while index < len(lines) and lines[index].strip() and (QUOTE.match(lines[index]) or quoted):
                quote = QUOTE.match(lines[index])
                quoted.append(quote.group(1) if quote else lines[index])
                index += 1
            blocks.append(("quote", parse_blocks(quoted, first_line + index - len(quoted))))
            continue
        if LIST_ITEM.match(line):
            index = parse_list(lines, index, blocks, first_line)
            continue
        if "|" in line and index + 1 < len(lines) and TABLE_DELIMITER.match(lines[index + 1]) \
                and "-" in lines[index + 1]:
            index = parse_table(lines, index, blocks)
            continue
        # A paragraph: lines up to a blank line or the start of another kind of block.
        text = [line.strip()]
        index += 1
        while index < len(lines) and lines[index].strip() and not interrupts_paragraph(lines[index]):
            text.append(lines[index].strip())
            index += 1
        blocks.append(("paragraph", " ".join(text)))
    return blocks


def interrupts_paragraph(line):
    """Whether `line` starts a new block even straight after a paragraph's line (CommonMark's rule: a numbered
    item interrupts a paragraph only when it is numbered 1)."""
    if FENCE.match(line) or HEADING.match(line) or QUOTE.match(line) or RULE.match(line):
        return True
    item = LIST_ITEM.match(line)
    return bool(item and item.group(4).strip() and (not item.group(2)[0].isdigit() or item.group(2)[:-1] == "1"))


def strip_indent(line, count):
    """`line` without up to `count` leading spaces (tabs count as four)."""
    line = line.expandtabs(4)
    removable = len(line) - len(line.lstrip(" "))
    return line[min(count, removable):]


def parse_list(lines, index, blocks, first_line):
    """Parses the list starting at lines[index] into blocks; returns the index of the first line after it."""
    first = LIST_ITEM.match(lines[index])
    ordered = first.group(2)[0].isdigit()
    marker_kind = first.group(2)[-1]  # '-', '*', '+', '.' or ')': a different one starts a new list
    start = int(first.group(2)[:-1]) if ordered else 1
    items = []
    while index < len(lines):
        item = LIST_ITEM.match(lines[index])
        if not item or item.group(2)[-1] != marker_kind or item.group(2)[0].isdigit() != ordered:
            break
        spaces = len(item.group(3))
        # The item's content starts after the marker and its spaces (one space when the text is indented as code).
        content_indent = len(item.group(1)) + len(item.group(2)) + (spaces if 1 <= spaces <= 4 else 1)
        body = [item.group(4) if spaces <= 4 else " " * (spaces - 1) + item.group(4)]
        start_line = first_line + index
        index += 1
        in_fence = bool(FENCE.match(body[0].strip()))
        while index < len(lines):
            line = lines[index]
            indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))
            if not line.strip():
                # A blank line: the item goes on only if an indented line follows.
                following = next((l for l in lines[index + 1:] if l.strip()), None)
                if in_fence or (following is not None
                                and len(following.expandtabs(4)) - len(following.expandtabs(4).lstrip(" "))
                                >= content_indent):
                    body.append("")
                    index += 1
                    continue
                break
            if indent >= content_indent:
                body.append(strip_indent(line, content_indent))
            elif in_fence:
                body.append(line.strip())
            elif body[-1].strip() and not interrupts_paragraph(line) and not LIST_ITEM.match(line) \
                    and not FENCE.match(body[-1].strip()):
                body.append(line.strip())  # a lazy continuation of the item's paragraph
            else:
                break
            if FENCE.match(body[-1].strip()):
                in_fence = not in_fence
            index += 1
        items.append(parse_blocks(body, start_line))
        # Blank lines between items are allowed; the list ends at anything else.
        blank = index
        while blank < len(lines) and not lines[blank].strip():
            blank += 1
        if blank < len(lines) and LIST_ITEM.match(lines[blank]) and blank > index:
            index = blank
    blocks.append(("list", ordered, start, items))
    return index


def split_row(line):
    """The cells of a table row: split at '|' outside code spans and not escaped as '\\|'."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells, cell, in_code, position = [], "", False, 0
    while position < len(line):
        char = line[position]
        if char == "\\" and line[position + 1:position + 2] == "|":
            cell += "|"
            position += 2
            continue
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += char
        position += 1
    cells.append(cell.strip())
    return cells


def parse_table(lines, index, blocks):
    """Parses the pipe table starting at lines[index]; returns the index after it."""
    header = split_row(lines[index])
    alignments = []
    for cell in split_row(lines[index + 1]):
        left, right = cell.startswith(":"), cell.endswith(":")
        alignments.append("c" if left and right else "r" if right else "l")
    rows = []
    index += 2
    while index < len(lines) and lines[index].strip() and "|" in lines[index]:
        rows.append(split_row(lines[index]))
        index += 1
    columns = len(header)
    alignments = (alignments + ["l"] * columns)[:columns]
    rows = [(row + [""] * columns)[:columns] for row in rows]
    blocks.append(("table", alignments, header, rows))
    return index


# ---------------------------------------------------------------------------------------------------------------
# Inline text: code spans, emphasis, links; then troff's escapes.
# ---------------------------------------------------------------------------------------------------------------

def find_closer(text, position, delimiter):
    """The index of the `delimiter` closing an emphasis opened just before `position`, or -1.

    Code spans and backslash escapes are skipped; a closer must follow a non-space, and a single '*' or '_' must
    not be half of a double one.
    """
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == "`":
            run = len(text[position:]) - len(text[position:].lstrip("`"))
            end = text.find("`" * run, position + run)
            position = end + run if end >= 0 else position + run
            continue
        if text.startswith(delimiter, position) and position > 0 and not text[position - 1].isspace():
            after = text[position + len(delimiter):position + len(delimiter) + 1]
            single = len(delimiter) == 1
            if single and (after == delimiter or text[position - 1] == delimiter):
                position += 1
                continue
            if delimiter[0] == "_" and after.isalnum():
                position += 1
                continue
            if not single:  # "***" closing "**…*…***": the inner '*' takes the run's first star
                run = len(text[position:]) - len(text[position:].lstrip(delimiter[0]))
                position += max(0, run - len(delimiter))
            return position
        position += 1
    return -1


def parse_inline(text):
    """`text` as a list of nodes: ("text", s), ("code", s), ("strong", nodes), ("em", nodes), ("link", nodes,
    url)."""
    nodes = []
    plain = ""
    position = 0

    def flush():
        nonlocal plain
        if plain:
            nodes.append(("text", plain))
        plain = ""

    while position < len(text):
        char = text[position]
        rest = text[position:]
        if char == "\\" and position + 1 < len(text) and text[position + 1] in "\\`*_{}[]()#+-.!|<>~\"'":
            plain += text[position + 1]
            position += 2
            continue
        if char == "`":
            run = len(rest) - len(rest.lstrip("`"))
            end = text.find("`" * run, position + run)
            while end >= 0 and text[end + run:end + run + 1] == "`":  # the closer is a run of exactly `run`
                end = text.find("`" * run, end + run + 1)
            if end >= 0:
                code = text[position + run:end]
                if code.startswith(" ") and code.endswith(" ") and code.strip():
                    code = code[1:-1]
                flush()
                nodes.append(("code", code))
                position = end + run
            else:
                plain += "`" * run
                position += run
            continue
        link = re.match(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)", rest)
        if link:
            flush()
            nodes.append(("link", parse_inline(link.group(1)), link.group(2)))
            position += link.end()
            continue
        autolink = re.match(r"<((?:https?|ftp|mailto):[^>\s]+)>", rest)
        if autolink:
            flush()
            nodes.append(("link", [], autolink.group(1)))
            position += autolink.end()
            continue
        if char in "*_":
            delimiter = char * 2 if rest.startswith(char * 2) else char
            opens = position + len(delimiter) < len(text) and not text[position + len(delimiter)].isspace()
            if char == "_" and position > 0 and text[position - 1].isalnum():
                opens = False  # snake_case is not emphasis
            closer = find_closer(text, position + len(delimiter), delimiter) if opens else -1
            if closer > position + len(delimiter):
                flush()
                inner = parse_inline(text[position + len(delimiter):closer])
                nodes.append(("strong" if len(delimiter) == 2 else "em", inner))
                position = closer + len(delimiter)
                continue
            plain += delimiter
            position += len(delimiter)
            continue
        plain += char
        position += 1
    flush()
    return nodes


FONTS = {(False, False): "R", (True, False): "B", (False, True): "I", (True, True): "BI"}


def font_escape(bold, italic):
    """The escape selecting the font for this combination of bold and italic."""
    name = FONTS[(bold, italic)]
    return f"\\f{name}" if len(name) == 1 else f"\\f({name}"


def render_inline(nodes, bold=False, italic=False, upper=False):
    """Nodes as troff text; fonts are switched explicitly (not with \\fP), so nested emphasis comes back right."""
    out = []
    for node in nodes:
        kind = node[0]
        if kind == "text":
            out.append(escape(node[1].upper() if upper else node[1]))
        elif kind == "code":
            out.append(font_escape(True, italic) + escape(node[1], code=True) + font_escape(bold, italic))
        elif kind == "strong":
            out.append(font_escape(True, italic) + render_inline(node[1], True, italic, upper) + font_escape(bold,
                                                                                                            italic))
        elif kind == "em":
            out.append(font_escape(bold, True) + render_inline(node[1], bold, True, upper) + font_escape(bold, italic))
        elif kind == "link":
            out.append(render_link(node[1], node[2], bold, italic, upper))
    return "".join(out)


def render_link(text_nodes, url, bold, italic, upper):
    """A link as its text and where it goes: `<URL>` for an absolute address, `(FILE)` for a relative link to
    another document, nothing more for an anchor in this one."""
    text = render_inline(text_nodes, bold, italic, upper)
    plain_text = "".join(node[1] for node in text_nodes if node[0] in ("text", "code"))
    if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.IGNORECASE):
        address = url[len("mailto:"):] if url.startswith("mailto:") else url
        if not text or plain_text == address:
            return "<" + escape(address, code=True) + ">"
        return text + " <" + escape(address, code=True) + ">"
    target = url.split("#")[0]
    if not target:
        return text  # an anchor in this document: its text says enough
    name = os.path.basename(target.rstrip("/")) or target
    if plain_text in (target, name):
        return text
    return text + " (" + escape(name, code=True) + ")"


def plain_words(nodes):
    """The words of inline nodes without markup (for the NAME line)."""
    return "".join(node[1] if node[0] in ("text", "code") else plain_words(node[1]) for node in nodes)


# ---------------------------------------------------------------------------------------------------------------
# The page.
# ---------------------------------------------------------------------------------------------------------------

class Page:
    """Collects troff lines, guarding each text line against being read as a request."""

    def __init__(self):
        self.lines = []
        self.uses_tables = False

    def request(self, line):
        self.lines.append(line)

    def text(self, line, verbatim=False):
        """A line of text: stripped (a leading space would break the line in fill mode) unless `verbatim`, and
        with a leading '.' or "'" made harmless by \\&."""
        if not verbatim:
            line = line.strip()
        if line.startswith((".", "'")):
            line = "\\&" + line
        if line:
            self.lines.append(line)


def render_blocks(page, blocks):
    """Emits blocks at the current left margin (the page's, or an .RS inside a list item or a quote)."""
    for block in blocks:
        kind = block[0]
        if kind == "heading":
            level, text = block[1], block[2]
            if level <= 2:
                page.request(".SH")
                page.text(render_inline(parse_inline(text), upper=True))
            elif level == 3:
                page.request(".SS")
                page.text(render_inline(parse_inline(text)))
            else:
                page.request(".PP")
                page.text("\\fB" + render_inline(parse_inline(text), bold=True) + "\\fR")
        elif kind == "paragraph":
            page.request(".PP")
            page.text(render_inline(parse_inline(block[1])))
        elif kind == "code":
            page.request(".PP")
            page.request(".RS 4")
            page.request(".EX")
            for line in block[1]:
                line = escape(line.expandtabs(8).rstrip(), code=True)
                if line:
                    page.text(line, verbatim=True)
                else:
                    page.request("")  # an empty line in a code block stays one (no fill mode here)
            page.request(".EE")
            page.request(".RE")
        elif kind == "rule":
            page.request(".PP")
        elif kind == "quote":
            page.request(".RS 4")
            render_blocks(page, block[1])
            page.request(".RE")
        elif kind == "list":
            render_list(page, block)
        elif kind == "table":
            render_table(page, block)


def render_list(page, block):
    """A list: each item an .IP with its bullet or number; the item's further blocks (paragraphs, code, nested
    lists) are inside .RS/.RE at the item's text, so they line up with it."""
    _, ordered, start, items = block
    width = len(str(start + len(items) - 1)) + 2 if ordered else 2
    for offset, item in enumerate(items):
        marker = f"{start + offset}." if ordered else r"\(bu"
        page.request(f".IP {marker} {width}")
        rest = item
        if item and item[0][0] == "paragraph":
            page.text(render_inline(parse_inline(item[0][1])))
            rest = item[1:]
        else:
            page.text("\\&")  # an item starting with a code block or a list: its marker on a line of its own
        if rest:
            page.request(f".RS {width}")
            render_blocks(page, rest)
            page.request(".RE")


def render_table(page, block):
    """A pipe table as a tbl(1) table: the header in bold, each cell a text block so long cells wrap."""
    _, alignments, header, rows = block
    page.uses_tables = True
    columns = len(header)
    page.request(".PP")
    page.request(".na")  # cells ragged-right: narrow columns justified are full of holes
    page.request(".TS")
    page.request("tab(\t);")
    page.request(" ".join(alignment + "b" for alignment in alignments))
    # The last column takes what width is left (x); the others are as wide as their text blocks need.
    page.request(" ".join(alignments[:-1] + [alignments[-1] + "x"]) + ".")

    def cell(text, bold=False):
        # \& first: a cell that is '_', '=' or '\^' would otherwise be a rule or a span, one starting with '.' a
        # request. A long cell is a text block (T{ … T}), which tbl fills and wraps within its column.
        rendered = "\\&" + render_inline(parse_inline(text), bold=bold)
        return rendered if len(text) <= 24 else "T{\n" + rendered + "\nT}"

    page.request("\t".join(cell(text, bold=True) for text in header))
    page.request("_")
    for row in rows:
        page.request("\t".join(cell(text) for text in row[:columns]))
    page.request(".TE")
    page.request(".ad")


def convert(markdown, options):
    """The whole man page for the Markdown text."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = parse_blocks(lines)
    title = options.title
    if blocks and blocks[0][0] == "heading" and blocks[0][1] == 1:
        title = title or plain_words(parse_inline(blocks[0][2]))
        blocks = blocks[1:]
    if not title:
        raise MarkdownError("no title: the document has no '#' heading and --title is not given")

    page = Page()
    source = f"{options.source} {options.version}" if options.version else options.source
    page.request(".TH " + " ".join(quoted(field) for field in [
        escape(options.name.upper(), code=True), options.section, options.date, escape(source),
        escape(options.manual or MANUALS.get(options.section[0], ""))]))
    # No hyphenation, ragged right: the text is full of paths, keys and values that must read (and be copied)
    # whole, and unhyphenated justified lines would be full of holes.
    page.request(".nr HY 0")  # what .YS and .EE (groff's an-ext) restore hyphenation to
    page.request(".nh")
    page.request(".ad l")
    page.request(".SH NAME")
    page.text(escape(options.name, code=True) + r" \- " + escape(title))
    if blocks and blocks[0][0] != "heading":
        page.request(".SH DESCRIPTION")
    render_blocks(page, blocks)
    if options.see_also:
        page.request(".SH SEE ALSO")
        references = []
        for reference in options.see_also:
            match = re.fullmatch(r"([^()\s]+)\(([0-9][a-z]*)\)", reference)
            if not match:
                raise MarkdownError(f"--see-also: '{reference}' is not NAME(SECTION)")
            references.append(f"\\fB{escape(match.group(1), code=True)}\\fR({match.group(2)})")
        page.text(", ".join(references))

    # A .PP straight before a heading, another paragraph or a list item does nothing (each starts a paragraph of
    # its own); leaving it out keeps the page's source plain.
    cleaned = []
    for line in page.lines:
        if cleaned and cleaned[-1] == ".PP" and line.split(" ")[0] in (".SH", ".SS", ".PP", ".IP"):
            cleaned.pop()
        cleaned.append(line)
    while cleaned and cleaned[-1] == ".PP":
        cleaned.pop()
    cleaned[1:1] = fallbacks("\n".join(cleaned))  # after .TH
    preamble = ["'\\\" t"] if page.uses_tables else []  # tells man to run the page through tbl
    preamble.append(f'.\\" Generated from {os.path.basename(options.input)} by scripts/md-to-man.py: do not edit.')
    return "\n".join(preamble + cleaned) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", metavar="INPUT.md", help="the Markdown document")
    parser.add_argument("--name", required=True, help="the page's name, such as aulos-rig")
    parser.add_argument("--section", required=True, help="the manual section, such as 5")
    parser.add_argument("--title", help="the one-line description after the name (default: the '#' heading)")
    parser.add_argument("--version", help="the version the page documents, shown in its footer")
    parser.add_argument("--date", metavar="YYYY-MM-DD",
                        help="the page's date (default: $SOURCE_DATE_EPOCH's, else today)")
    parser.add_argument("--source", default="aulos", help="the software the page belongs to (default: aulos)")
    parser.add_argument("--manual", help="the manual's name in the header (default: by section)")
    parser.add_argument("--see-also", action="append", default=[], metavar="NAME(SECTION)",
                        help="a page for the SEE ALSO section (repeatable)")
    options = parser.parse_args()
    if not re.fullmatch(r"[0-9][a-z]*", options.section):
        parser.error(f"--section: '{options.section}' is not a manual section (1, 5, 3p, …)")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", options.name):
        parser.error(f"--name: '{options.name}' is not a page name")
    try:
        options.date = page_date(options.date, MarkdownError)
        try:
            with open(options.input, encoding="utf-8") as file:
                markdown = file.read()
        except OSError as error:
            raise MarkdownError(f"{options.input}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise MarkdownError(f"{options.input}: not UTF-8 text") from None
        try:
            output = convert(markdown.lstrip("\ufeff"), options)
        except MarkdownError as error:
            raise MarkdownError(f"{options.input}: {error}") from None
    except MarkdownError as error:
        print(f"md-to-man.py: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
