#!/usr/bin/env python3
"""Writes aulos's manual pages (section 1) from the binary's own command definitions.

    scripts/make-man-pages.py BINARY OUTDIR [--version V] [--date YYYY-MM-DD] [--prefix PREFIX]

`BINARY --experimental-dump-help` is swift-argument-parser's JSON dump of every command, subcommand, option,
flag and argument with its abstract, discussion, value name, default and allowed values (ToolInfoV0 in
swift-argument-parser's Sources/ArgumentParserToolInfo/ToolInfo.swift). `--help` prints from the same
definitions, so the pages say what `--help` says and cannot drift from it: a new option is in the next build's
pages without anyone editing them.

It writes one page per command, named by its path with dashes: `aulos.1` for the root (NAME, SYNOPSIS,
DESCRIPTION, OPTIONS, COMMANDS, FILES, ENVIRONMENT, SEE ALSO) and `aulos-render.1`, `aulos-service.1`,
`aulos-service-install.1`, … for every subcommand at every depth. What `--help` hides is left out: hidden
commands and options (shouldDisplay false), and the `help` subcommand swift-argument-parser adds to the dump
(`aulos help` is described on aulos(1) instead). The synopsis is the USAGE line `--help` prints, by the same
rule (more than 12 arguments fold into [<options>]); each option keeps its value name, its default, its allowed
values and its repeatable ("...") marker, as `--help` shows them.

Text is escaped for troff: a leading '.' or "'" is guarded by \\&, backslashes are \\e, the dashes of options
and negative numbers are \\- (a hyphen inside a word stays a hyphen), characters outside ASCII are troff's
named glyphs or \\[uXXXX]. Option names and `quoted code` in the text are set in bold. Paragraphs are single
lines: troff fills them; nothing is wrapped here.

The FILES and ENVIRONMENT sections of aulos.1 are the one part not taken from the binary: they are written
below (files_and_environment) from what Sources/AulosRig/Files/SearchPaths.swift and ControlSocket.swift do.
The date is --date, else $SOURCE_DATE_EPOCH (reproducible builds: dpkg-buildpackage sets it), else today. The
version in the footer is --version, else the first line of `BINARY --version`. The names of the pages written
are printed, one a line. Errors (no binary, a binary that fails, a dump that is not what is expected) are one
line on stderr and exit status 2.
"""

import argparse
import json
import os
import re
import subprocess
import sys

from troff import escape, fallbacks, page_date, quoted

PROGRAM = "make-man-pages.py"
SECTION = "1"
MANUAL = "User Commands"
# swift-argument-parser's own flags, which every command has: kept (--help lists them) but not counted when the
# USAGE line decides whether to fold the options into [<options>].
BUILTIN_FLAGS = {"help", "version"}
USAGE_FOLD = 12  # UsageGenerator.synopsis: more arguments than this print as "[<options>]"

class DumpError(Exception):
    """A problem running the binary or reading its dump, reported as one line."""


# ---------------------------------------------------------------------------------------------------------------
# troff text
# ---------------------------------------------------------------------------------------------------------------

# In prose: `code` and --options are set in bold. An option is two dashes and a word at the start of a word
# ("--lowest-latency", "--web/--osc" is two); one dash is left alone ("-90 dBFS", "'aplay -L'").
INLINE = re.compile(r"`([^`]+)`|(?<![\w-])(--[A-Za-z][A-Za-z0-9-]*)")


def prose(text):
    """One line of help text as troff: escaped, code and options in bold."""
    out = []
    position = 0
    for match in INLINE.finditer(text):
        out.append(escape(text[position:match.start()]))
        code = match.group(1) if match.group(1) is not None else match.group(2)
        out.append(r"\fB" + escape(code, code=True) + r"\fR")
        position = match.end()
    out.append(escape(text[position:]))
    return guard("".join(out))


def guard(line):
    """A text line that troff will not take for a request: \\& before a leading '.' or "'"."""
    return "\\&" + line if line.startswith((".", "'")) else line


def paragraphs(text):
    """Help text as troff lines: a blank line starts a new paragraph (.PP), a single line break is kept (.br), as
    --help keeps it; a line's leading spaces are kept (troff starts it on a new line, indented)."""
    lines = []
    for number, paragraph in enumerate(re.split(r"\n\s*\n", text.strip("\n"))):
        if number:
            lines.append(".PP")
        for index, line in enumerate(paragraph.split("\n")):
            if index and not line.startswith(" "):
                lines.append(".br")
            if line.strip():
                indent = len(line) - len(line.lstrip(" "))
                lines.append(" " * indent + prose(line.strip()) if indent else prose(line.rstrip()))
    return lines


def bold(text):
    return r"\fB" + escape(text, code=True) + r"\fR"


def page_reference(path, section=SECTION):
    """`aulos-render(1)` in bold with its section, as man pages refer to each other."""
    return rf"\fB{escape(page_name(path), code=True)}\fR({section})"


# ---------------------------------------------------------------------------------------------------------------
# The dump
# ---------------------------------------------------------------------------------------------------------------

def page_name(path):
    """aulos, aulos-render, aulos-service-install: the command's path joined by dashes."""
    return "-".join(path)


def visible(items):
    return [item for item in items or [] if item.get("shouldDisplay", True)]


def is_injected_help(command, parent_path):
    """The `help` subcommand swift-argument-parser puts into the dump (a "hack", its source says) but not into
    the root's --help listing."""
    return not parent_path[1:] and command.get("commandName") == "help" \
        and command.get("abstract") == "Show subcommand help information."


def subcommands(command, path):
    return [sub for sub in visible(command.get("subcommands")) if not is_injected_help(sub, path)]


def is_builtin(argument):
    names = {name["name"] for name in argument.get("names") or []}
    return argument["kind"] == "flag" and bool(names & BUILTIN_FLAGS) and names <= BUILTIN_FLAGS | {"h"}


def names_of(argument):
    """An option's names as --help writes them: short ones first (-o, --output)."""
    names = argument.get("names") or []
    ordered = [n for n in names if n["kind"] == "short"] + [n for n in names if n["kind"] != "short"]
    return [("-" if n["kind"] in ("short", "longWithSingleDash") else "--") + n["name"] for n in ordered]


def preferred_name(argument):
    name = argument.get("preferredName") or (argument.get("names") or [None])[0]
    if name is None:
        raise DumpError(f"the {argument['kind']} '{argument.get('valueName', '?')}' has no name")
    return ("-" if name["kind"] in ("short", "longWithSingleDash") else "--") + name["name"]


def value(argument):
    """The value placeholder, <name>, italic, with the repeat marker."""
    text = r"\fI" + escape("<" + (argument.get("valueName") or "value") + ">", code=True) + r"\fR"
    return text + (r"\~..." if argument.get("isRepeating") else "")


def synopsis_item(argument):
    """One argument in the USAGE line, as UsageGenerator writes it: [--name <value> ...], <file> ..., -- <x>.
    Its parts are joined by unbreakable spaces (\\~), so a line of the synopsis breaks only between arguments."""
    if argument["kind"] == "positional":
        text = value(argument)
    elif argument["kind"] == "option":
        text = bold(preferred_name(argument)) + r"\~" + value(argument)
    else:
        text = bold(preferred_name(argument)) + (r"\~..." if argument.get("isRepeating") else "")
    if argument.get("isOptional"):
        text = "[" + text + "]"
    if argument.get("parsingStrategy") == "postTerminator":
        text = r"\fB\-\-\fR\~" + text
    return text


def label(argument):
    """An argument's tag in its list: `-o, --output <output>`, `<files> ...`."""
    if argument["kind"] == "positional":
        return value(argument)
    text = ", ".join(bold(name) for name in names_of(argument))
    return text + (" " + value(argument) if argument["kind"] == "option" else
                   " ..." if argument.get("isRepeating") else "")


def values_and_default(argument):
    """The "(values: a, b; default: c)" --help appends to an abstract (values only when they are not listed with
    descriptions)."""
    values = [] if argument.get("allValueDescriptions") else [v for v in argument.get("allValues") or [] if v]
    default = argument.get("defaultValue") or ""
    parts = []
    if values:
        parts.append("values: " + ", ".join(values))
    if default:
        parts.append("default: " + default)
    return "(" + "; ".join(parts) + ")" if parts else ""


# ---------------------------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------------------------

# What aulos.1 says about files and the environment. Written here, not taken from the binary: keep it to what
# Sources/AulosRig/Files/SearchPaths.swift and Sources/AulosPlayback/Service/ControlSocket.swift do.
def files_and_environment(prefix):
    data = f"{prefix}/share/aulos" if prefix else "PREFIX/share/aulos"
    where = (f"found as share/aulos beside the binary's folder, {prefix}/bin" if prefix else
             "found as share/aulos beside the folder the aulos binary is in: /usr/share/aulos for /usr/bin/aulos "
             "(the Debian package), /usr/local/share/aulos for /usr/local/bin/aulos (make install)")
    return [
        ".SH FILES",
        ".TP", r"\fI" + escape(data, code=True) + r"\fR",
        prose(f"The data folder, {where}. It holds presets/ (synth presets, the factory rigs and rig sets in "
              "presets/rigs/, tunings, wavetables, scores), soundfonts/ (the bundled General MIDI SoundFont, "
              "AulosGM.sf2), web/ (the web panel's page) and sfz/ (an example SFZ library)."),
        ".IP",
        prose("aulos plays from the first of these that has presets/rigs/: the folders of $AULOS_DATA, this one, "
              "the source checkout (for a binary built in one), then the aulos/ folder of each $XDG_DATA_DIRS "
              "folder (/usr/local/share/aulos, /usr/share/aulos). `aulos --version` prints which."),
        ".TP", r"\fI\(ti/.local/share/sounds/sf2/default\-GM.sf2\fR, \fI/usr/share/sounds/sf2/default\-GM.sf2\fR",
        prose("General MIDI SoundFonts (or .sf3) the sampler plays, the user's before the system's, when neither "
              "--soundfont, a rig nor $AULOS_SOUNDFONT names one; the bundled AulosGM.sf2 plays when neither "
              "exists."),
        ".TP", r"\fI/run/aulos/control\fR",
        prose("The control socket of the service (`aulos status`, `aulos set`, `aulos learn` talk to it); "
              "outside the service, $XDG_RUNTIME_DIR/aulos/control."),
        ".SH ENVIRONMENT",
        ".TP", r"\fBAULOS_DATA\fR",
        prose("Data folders (separated by ':') searched before the installed one, each laid out as the data "
              "folder above."),
        ".TP", r"\fBAULOS_PRESETS\fR",
        prose("Preset folders (separated by ':') searched before the data folders' presets/: synth/, rigs/, "
              "tunings/, wavetables/ and scores/ in each."),
        ".TP", r"\fBAULOS_SOUNDFONT\fR",
        prose("The SoundFont the sampler plays when neither --soundfont nor the rig names one."),
        ".TP", r"\fBAULOS_CONTROL_SOCKET\fR",
        prose("The control socket aulos play serves and aulos status, set, save and learn look for, when no "
              "option names one."),
    ]


def synopsis(command, path):
    """The SYNOPSIS: the USAGE line of --help, by UsageGenerator's rule."""
    arguments = [a for a in visible(command.get("arguments")) if not is_builtin(a)]
    if len(arguments) > USAGE_FOLD:
        required = [a for a in arguments if a["kind"] == "positional" or not a.get("isOptional")]
        items = ([r"[\fI<options>\fR]"] + [synopsis_item(a) for a in required]) if len(required) <= USAGE_FOLD \
            else [r"\fI<options>\fR"]
    else:
        items = [synopsis_item(a) for a in arguments]
    if subcommands(command, path):
        item = r"\fI<subcommand>\fR"
        items.insert(0, item if not command.get("defaultSubcommand") else "[" + item + "]")
    # One line: troff fills it, indented under the command's name (.SY); a line per item would end some items
    # in "...]", which troff takes for the end of a sentence and follows with two spaces.
    return [".SH SYNOPSIS", ".SY " + quoted(escape(" ".join(path), code=True))] + ([" ".join(items)] if items else []) \
        + [".YS"]


def argument_entries(arguments):
    """.TP entries for a list of arguments: the tag, the abstract with values and default, the discussion (with
    each allowed value and its description, when the argument lists them)."""
    lines = []
    for argument in arguments:
        lines += [".TP", label(argument)]
        abstract = " ".join(part for part in [argument.get("abstract") or "", values_and_default(argument)] if part)
        if abstract:
            lines += paragraphs(abstract)
        discussion = argument.get("discussion")
        if discussion:
            lines += [".IP"] if abstract else []
            lines += paragraphs(discussion)
        descriptions = argument.get("allValueDescriptions") or {}
        if descriptions:
            lines.append(".RS")
            for name in argument.get("allValues") or sorted(descriptions):
                lines += [".TP", bold(name)] + paragraphs(descriptions.get(name, "") or " ")
            lines.append(".RE")
    return lines


def render_page(command, path, options):
    """The troff text of one command's page."""
    name = page_name(path)
    children = subcommands(command, path)
    arguments = visible(command.get("arguments"))
    lines = [
        f'.\\" Made by scripts/make-man-pages.py from `{" ".join(path[:1])} --experimental-dump-help`: do not edit.',
        ".TH " + " ".join(quoted(field) for field in [
            escape(name.upper(), code=True), SECTION, options.date, escape(options.source_line), MANUAL]),
        # No hyphenation, ragged right: the text is full of paths, option names and values that must read (and be
        # copied) whole, and unhyphenated justified lines would be full of holes.
        ".nr HY 0",  # what .YS and .EE (groff's an-ext) restore hyphenation to
        ".nh",
        ".ad l",
        ".SH NAME",
        guard(escape(name, code=True) + r" \- " + escape(command.get("abstract") or " ".join(path))),
    ]
    lines += synopsis(command, path)

    lines.append(".SH DESCRIPTION")
    if len(path) > 1 and command.get("abstract"):
        lines += paragraphs(command["abstract"])
        if command.get("discussion"):
            lines.append(".PP")
    if command.get("discussion"):
        lines += paragraphs(command["discussion"])
    elif len(path) == 1:
        lines += paragraphs(command.get("abstract") or "")
    if command.get("aliases"):
        lines += [".PP", prose("Also invoked as " + ", ".join(f"`{' '.join(path[:-1] + [a])}`"
                                                                for a in command["aliases"]) + ".")]
    if children:
        lines += [".PP", prose(f"Each subcommand has its own page, below; `{' '.join(path)} help SUBCOMMAND` "
                               f"and `{' '.join(path)} SUBCOMMAND --help` print its help." if len(path) == 1 else
                               f"Each subcommand has its own page, below; `{' '.join(path)} SUBCOMMAND --help` "
                               f"prints its help.")]

    positionals = [a for a in arguments if a["kind"] == "positional" and not a.get("sectionTitle")]
    named = [a for a in arguments if a["kind"] != "positional" and not a.get("sectionTitle")]
    titled = {}
    for argument in arguments:
        if argument.get("sectionTitle"):
            titled.setdefault(argument["sectionTitle"], []).append(argument)
    if positionals:
        lines += [".SH ARGUMENTS"] + argument_entries(positionals)
    if named:
        lines += [".SH OPTIONS"] + argument_entries(named)
    for title, group in titled.items():
        lines += [".SH " + quoted(escape(title.upper()))] + argument_entries(group)

    if children:
        lines.append(".SH COMMANDS")
        for child in children:
            child_path = path + [child["commandName"]]
            tag = ", ".join(bold(n) for n in [child["commandName"]] + (child.get("aliases") or []))
            if command.get("defaultSubcommand") == child["commandName"]:
                tag += " (default)"
            lines += [".TP", tag]
            abstract = paragraphs(child.get("abstract") or "") or [""]
            abstract[-1] = (abstract[-1] + " See " + page_reference(child_path) + ".").lstrip()
            lines += abstract

    if len(path) == 1:
        lines += files_and_environment(options.prefix)

    see_also = []
    if len(path) > 1:
        see_also.append(page_reference(path[:1]))
        if len(path) > 2:
            see_also.append(page_reference(path[:-1]))
    see_also += [page_reference(path + [child["commandName"]]) for child in children]
    takes_rig = any(name in ("--rig",) for a in arguments for name in names_of(a))
    if len(path) == 1 or takes_rig:
        see_also.append(page_reference(["aulos-rig"], "5"))
    if see_also:
        lines += [".SH SEE ALSO", ",\n".join(see_also)]
    lines[2:2] = fallbacks("\n".join(lines))  # after the comment and .TH
    return "\n".join(lines) + "\n"


def walk(command, path, pages):
    """Collects (file name, page) for `command` and every visible subcommand below it."""
    pages.append((page_name(path) + "." + SECTION, command, path))
    for child in subcommands(command, path):
        if not isinstance(child.get("commandName"), str):
            raise DumpError(f"a subcommand of '{' '.join(path)}' has no name")
        walk(child, path + [child["commandName"]], pages)


# ---------------------------------------------------------------------------------------------------------------
# Running the binary
# ---------------------------------------------------------------------------------------------------------------

def run(binary, *arguments):
    """The standard output of `binary arguments`; DumpError with its first line of stderr when it fails."""
    try:
        result = subprocess.run([binary, *arguments], capture_output=True, timeout=120, check=False)
    except FileNotFoundError:
        raise DumpError(f"{binary}: No such file or directory") from None
    except PermissionError:
        raise DumpError(f"{binary}: Permission denied (not an executable?)") from None
    except OSError as error:
        raise DumpError(f"{binary}: {error.strerror}") from None
    except subprocess.TimeoutExpired:
        raise DumpError(f"{binary} {' '.join(arguments)}: no answer in 120 s") from None
    if result.returncode != 0:
        message = (result.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[0]
        raise DumpError(f"{binary} {' '.join(arguments)} failed (exit {result.returncode}): {message}")
    return result.stdout.decode("utf-8", "replace")


def read_dump(binary):
    """The root CommandInfoV0 of `binary --experimental-dump-help`."""
    text = run(binary, "--experimental-dump-help")
    try:
        dump = json.loads(text)
    except json.JSONDecodeError as error:
        raise DumpError(f"{binary} --experimental-dump-help: not JSON ({error.msg} at line {error.lineno})") \
            from None
    if not isinstance(dump, dict) or dump.get("serializationVersion") != 0 or not isinstance(dump.get("command"),
                                                                                                dict):
        raise DumpError(f"{binary} --experimental-dump-help: not swift-argument-parser's ToolInfoV0 "
                        f"(serializationVersion 0)")
    return dump["command"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", metavar="BINARY", help="the aulos executable")
    parser.add_argument("outdir", metavar="OUTDIR", help="the folder the pages are written to (made if missing)")
    parser.add_argument("--version", help="the version in the pages' footer (default: BINARY --version)")
    parser.add_argument("--date", metavar="YYYY-MM-DD",
                        help="the pages' date (default: $SOURCE_DATE_EPOCH's, else today)")
    parser.add_argument("--prefix", help="the installation prefix, to name the data folder in FILES "
                                         "(default: described as the folder above the binary's)")
    options = parser.parse_args()
    try:
        options.date = page_date(options.date, DumpError)
        root = read_dump(options.binary)
        if not options.version:
            first = (run(options.binary, "--version").strip().splitlines() or [""])[0].strip()
            options.version = first if re.fullmatch(r"[0-9][0-9A-Za-z.+~-]*", first) else ""
        if options.prefix:
            options.prefix = options.prefix.rstrip("/") or "/"
        path = [root.get("commandName") or os.path.basename(options.binary)]
        options.source_line = f"{path[0]} {options.version}" if options.version else path[0]
        pages = []
        walk(root, path, pages)
        rendered = [(file_name, render_page(command, page_path, options)) for file_name, command, page_path in pages]
    except DumpError as error:
        print(f"{PROGRAM}: {error}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, AttributeError) as error:  # a dump whose shape is not ToolInfoV0's
        print(f"{PROGRAM}: {options.binary} --experimental-dump-help: unexpected structure ({error!r})",
              file=sys.stderr)
        return 2
    try:
        os.makedirs(options.outdir, exist_ok=True)
        for file_name, text in rendered:
            target = os.path.join(options.outdir, file_name)
            with open(target + ".tmp", "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(target + ".tmp", target)
            print(target)
    except OSError as error:
        print(f"{PROGRAM}: {error.filename or options.outdir}: {error.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
