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
"""
import json
import os
import re
import subprocess
import sys

SYSTEM = {"Glibc", "Musl", "Foundation", "FoundationEssentials", "Dispatch", "Synchronization", "Testing",
          "XCTest", "_Concurrency", "Darwin"}
IMPORT = re.compile(r"^\s*(?:@testable\s+|@_exported\s+|@preconcurrency\s+)*import\s+(?:(?:struct|class|enum|func|var|let|protocol|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)", re.M)


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
        print("package graph: Package.swift does not match the imports:", file=sys.stderr)
        for line in problems:
            print("  " + line, file=sys.stderr)
        return 1
    print(f"package graph: {len(targets)} targets, dependencies match the imports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
