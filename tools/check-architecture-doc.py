#!/usr/bin/env python3
"""Fails when docs/architecture.md names a file, folder or C++ type that the tree no longer has.

Every `code span` of the document is checked: one that looks like a path (has a '/' or a file
extension) must exist, relative to the repository root or to one of the include roots (a file
named without a folder: anywhere in the sources); one that
looks like a C++ type (CamelCase, optionally namespace-qualified) must be declared as a class,
struct, enum or alias somewhere in the sources; one of the form `name_atom` must be a declared
atom. Other spans (commands, keys, values) are not checked.
Usage: tools/check-architecture-doc.py [REPO_ROOT]"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
doc = root / "docs" / "architecture.md"
text = doc.read_text()
# Fenced blocks are pictures and examples, not references.
text = re.sub(r"```.*?```", "", text, flags=re.S)
spans = sorted(set(re.findall(r"`([^`\n]+)`", text)))

source_dirs = ["core", "proto_msgs", "runtime", "actors", "tools", "bench", "examples", "tests",
               "python"]
sources = [p for d in source_dirs for p in (root / d).rglob("*")
           if p.suffix in {".hpp", ".cpp", ".h", ".cu"}]
code = "\n".join(p.read_text(errors="replace") for p in sources)
include_roots = [p for d in source_dirs for p in (root / d).rglob("include") if p.is_dir()]


def path_exists(span: str) -> bool:
    candidate = span.rstrip("/")
    if "/" not in span:  # a file named alone: anywhere in the sources
        return any(p.name == candidate for p in sources)
    if (root / candidate).exists():
        return True
    return any((inc / candidate).exists() for inc in include_roots)


def type_declared(name: str) -> bool:
    last = name.split("::")[-1]
    pattern = (rf"\b(class|struct|enum class|enum|using)\s+{re.escape(last)}\b"
               rf"|\b{re.escape(last)}\s*=\s*caf::typed_actor")
    return re.search(pattern, code) is not None


missing = []
checked = 0
for span in spans:
    if re.fullmatch(r"[\w.\-/]+/[\w.\-/]*|[\w\-/]+\.(hpp|cpp|md|toml|sh|py|pml|cmake|txt)", span):
        checked += 1
        if not path_exists(span):
            missing.append(f"file or folder `{span}`")
    elif re.fullmatch(r"(\w+::)*[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)*", span):
        checked += 1
        if not type_declared(span):
            missing.append(f"type `{span}`")
    elif re.fullmatch(r"[a-z_]+_atom", span):
        checked += 1
        if re.search(rf"\b{span}\b", code) is None:
            missing.append(f"atom `{span}`")

if missing:
    print(f"{doc}: {len(missing)} of {checked} references are stale:")
    for m in missing:
        print(f"  {m}")
    sys.exit(1)
print(f"{doc}: all {checked} file, type and atom references exist")
