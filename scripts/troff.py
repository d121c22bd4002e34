"""troff for the project's man pages: escaping text, quoting macro arguments, the page date.

Shared by scripts/make-man-pages.py (aulos(1) and its subcommands, from the binary's own command definitions) and
scripts/md-to-man.py (aulos-rig(5), from docs/rigs.md), so both spell characters the same way and both pages
carry a reproducible date.
"""

import datetime
import os

# Characters outside ASCII, as troff spells them. Anything else outside ASCII becomes \[uXXXX].
GLYPHS = {
    "\u2014": r"\(em", "\u2013": r"\(en", "\u2010": "-", "\u2011": "-", "\u2212": r"\-",
    "\u2018": r"\(oq", "\u2019": r"\(cq", "\u201c": r"\(lq", "\u201d": r"\(rq", "\u00ab": r"\(Fo", "\u00bb": r"\(Fc",
    "\u2192": r"\(->", "\u2190": r"\(<-", "\u2194": r"\(<>", "\u21d2": r"\(rA", "\u2191": r"\(ua", "\u2193": r"\(da",
    "\u00d7": r"\(mu", "\u00f7": r"\(di", "\u2264": r"\(<=", "\u2265": r"\(>=", "\u2260": r"\(!=", "\u2248": r"\(~~",
    "\u00b1": r"\(+-", "\u2026": "...", "\u00b5": r"\(mc", "\u03bc": r"\(*m", "\u00b7": r"\(pc", "\u00b0": r"\(de",
    "\u2022": r"\(bu", "\u00a9": r"\(co", "\u00ae": r"\(rg", "\u2122": r"\(tm", "\u00a7": r"\(sc", "\u00b6": r"\(ps",
    "\u00bd": r"\(12", "\u00bc": r"\(14", "\u00be": r"\(34", "\u00b2": r"\(S2", "\u00b3": r"\(S3", "\u00b9": r"\(S1",
    "\u221e": r"\(if", "\u2032": r"\(fm", "\u2033": r"\(sd", "\u266f": "#", "\u266d": "b", "\u266e": "",
    "\u00a0": r"\~", "\u202f": r"\~", "\u2009": r"\|", "\u200b": "", "\ufeff": "",
}

# ASCII characters troff (or groff's UTF-8 output) would not print as themselves.
ASCII = {"\\": r"\e", "`": r"\(ga", "~": r"\(ti", "^": r"\(ha"}
# Glyphs above that groff's ASCII device (man in the C locale) lacks, and what it prints instead: a page using
# one defines the fallback with .fchar, so it neither warns nor drops the character.
ASCII_FALLBACKS = {r"\(pc": "*", r"\(mc": "u", r"\(*m": "u", r"\(de": "o", r"\(~~": "~", r"\(Fo": "<<", r"\(Fc": ">>"}


def fallbacks(text):
    """.fchar requests for the glyphs `text` uses that have no ASCII rendering."""
    return [f".fchar \\[{glyph[2:]}] {ascii}" for glyph, ascii in ASCII_FALLBACKS.items() if glyph in text]


def escape(text, code=False):
    """`text` as troff input: escapes for backslashes and the characters below, '-' as \\- (in code always, in
    prose unless it joins a letter or digit to a letter, as in "true-peak"), and every non-ASCII character
    spelled out. In code, quotes stay ASCII quotes."""
    out = []
    for index, char in enumerate(text):
        if char == "-":
            before = text[index - 1] if index > 0 else " "
            after = text[index + 1] if index + 1 < len(text) else " "
            out.append("-" if not code and before.isalnum() and after.isalpha() else r"\-")
        elif char == "'" and code:
            out.append(r"\(aq")
        elif char == '"' and code:
            out.append(r"\(dq")
        elif char in ASCII:
            out.append(ASCII[char])
        elif char == "\t":
            out.append(" ")
        elif ord(char) < 32 or ord(char) == 127:
            continue  # control characters have no place in a page
        elif ord(char) < 128:
            out.append(char)
        elif char in GLYPHS:
            out.append(GLYPHS[char])
        else:
            out.append(f"\\[u{ord(char):04X}]" if ord(char) <= 0xFFFF else f"\\[u{ord(char):X}]")
    return "".join(out)


def quoted(argument):
    """A macro argument in double quotes (a double quote inside is \\(dq)."""
    return '"' + argument.replace('"', r"\(dq") + '"'


def page_date(option, error):
    """--date, else $SOURCE_DATE_EPOCH's day (UTC), else today: YYYY-MM-DD; `error` (an exception class) is raised
    with a one-line message for a bad value."""
    if option:
        try:
            return datetime.date.fromisoformat(option).isoformat()
        except ValueError:
            raise error(f"--date: '{option}' is not a date (YYYY-MM-DD)") from None
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc).date().isoformat()
        except (ValueError, OverflowError, OSError):
            raise error(f"SOURCE_DATE_EPOCH: '{epoch}' is not a number of seconds") from None
    return datetime.date.today().isoformat()
