#!/usr/bin/env python3
"""Fails when Package.swift and the code disagree about who depends on whom.

For every Swift target, the modules its files import must be exactly the target's declared dependencies
(system modules aside): a dependency declared but never imported, or a module imported but not declared,
is reported with the target's name and the fix. Run by `make test` (and `make lint`), so the package graph
stays the architecture docs/architecture.md draws.

Exceptions, each for a reason:
- a test target may depend on an executable target without importing it (the CLI tests run the built
  `aulos` binary; the dependency only makes SwiftPM build it first);
- a test target may depend on `CAllocationCounter` without importing it: the counting malloc is linked
  into the one test executable however many targets use it, and every target that counts declares it.

Then the layering the graph must keep (docs/architecture.md), import by import, naming the file:
- the drivers (AulosALSA, AulosJACK) import neither each other nor AulosUnits: what they share is AulosIO;
- AulosRig and AulosPlayback import no driver: the host (the `aulos` CLI) picks the driver and hands the
  rig an `AudioDriver`, and hands the live instrument its MIDI input (the ALSA sequencer as a
  `LiveMIDISource`).
"""
import json
import os
import re
import subprocess
import sys

SYSTEM = {"Glibc", "Musl", "Foundation", "FoundationEssentials", "Dispatch", "Synchronization", "Testing",
          "XCTest", "_Concurrency", "Darwin"}
IMPORT = re.compile(r"^\s*(?:@testable\s+|@_exported\s+|@preconcurrency\s+)*import\s+(?:(?:struct|class|enum|func|var|let|protocol|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


DRIVERS = {"AulosALSA", "AulosJACK"}
# target -> modules its files must never import
FORBIDDEN = {
    "AulosALSA": {"AulosJACK", "AulosUnits"},
    "AulosJACK": {"AulosALSA", "AulosUnits"},
    "AulosIO": DRIVERS | {"AulosUnits", "AulosGraph", "AulosRig", "AulosPlayback"},
    "AulosRig": DRIVERS,
    "AulosPlayback": DRIVERS,
}
# (target, module) -> the files (relative to the target's folder) still allowed to import it: none — the
# sequencer reaches the playback layer as AulosIO's LiveMIDISource, opened by the command line.
ALLOWED: dict = {}



def layering_problems(name, path, files):
    problems = []
    for file in files:
        with open(file, encoding="utf-8") as handle:
            modules = set(IMPORT.findall(handle.read()))
        relative = os.path.relpath(file, path)
        for module in sorted(modules & FORBIDDEN.get(name, set())):
            if relative in ALLOWED.get((name, module), set()):
                continue
            problems.append(f"{name}: {relative} imports {module}, which the layering forbids "
                            f"(see docs/architecture.md; drivers share AulosIO, hosts pick the driver)")
    return problems


def swift_files(path):
    for folder, _, names in os.walk(path):
        for name in names:
            if name.endswith(".swift"):
                yield os.path.join(folder, name)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True,
                                        capture_output=True, text=True).stdout)
    targets = {target["name"]: target for target in package["targets"]}
    problems = []
    for name, target in targets.items():
        path = os.path.join(root, target.get("path") or f"Sources/{name}")
        files = list(swift_files(path))
        if not files:
            continue  # a C or system-library target
        imported = set()
        for file in files:
            with open(file, encoding="utf-8") as handle:
                imported.update(IMPORT.findall(handle.read()))
        imported -= SYSTEM
        imported.discard(name)
        problems += layering_problems(name, path, files)
        declared = set()
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            declared.add(value[0])
        is_test = target["type"] == "test"
        for module in sorted(declared - imported):
            if is_test and (targets.get(module, {}).get("type") == "executable" or module == "CAllocationCounter"):
                continue
            problems.append(f"{name}: declares {module} but no file imports it (remove it from Package.swift)")
        for module in sorted(imported - declared):
            problems.append(f"{name}: imports {module} without declaring it (add it to the target's dependencies)")
    if problems:
        print("package graph: Package.swift does not match the imports, or an import breaks the layering:",
              file=sys.stderr)
        for line in problems:
            print("  " + line, file=sys.stderr)
        return 1
    print(f"package graph: {len(targets)} targets, dependencies match the imports, layering kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
