#!/usr/bin/env python3
"""The module layering rule of docs/design.md ("Layering"), enforced.

Reads the table between <!-- layering:begin --> and <!-- layering:end -->,
then every #include under lib/ and include/txscale/, and fails on:
  - a folder under lib/ that the table does not place, or a row without one;
  - a public header no row owns, or owned twice;
  - an include of a module's header (public <txscale/X.h>, or "mod/x.h") from a
    module whose row does not list that module; <txscale/txscale.h> in lib/;
  - a quoted include "x.h" that is not in the including file's own folder;
  - a cycle in the table.
usage: layering.py SRCDIR
"""
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
errors = []

text = open(os.path.join(src, "docs", "design.md"), encoding="utf-8").read()
m = re.search(r"<!-- layering:begin -->(.*?)<!-- layering:end -->", text, re.S)
if not m:
    sys.exit("FAIL: docs/design.md has no layering table")
allowed, owner = {}, {}
for line in m.group(1).splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or cells[0] in ("module", "") or set(cells[0]) <= set("-"):
        continue
    mod, headers, deps = cells
    allowed[mod] = set(deps.split())
    for h in headers.split():
        if h in owner:
            errors.append(f"header {h} owned by both {owner[h]} and {mod}")
        owner[h] = mod

for mod, deps in allowed.items():
    for d in deps:
        if d not in allowed:
            errors.append(f"row {mod} lists unknown module {d}")

# the table must be a DAG
state = {}
def visit(mod, path):
    if state.get(mod) == 1:
        errors.append("cycle in the table: " + " -> ".join(path + [mod]))
        return
    if state.get(mod) == 2:
        return
    state[mod] = 1
    for d in sorted(allowed.get(mod, ())):
        visit(d, path + [mod])
    state[mod] = 2
for mod in sorted(allowed):
    visit(mod, [])

libdir = os.path.join(src, "lib")
mods = sorted(d for d in os.listdir(libdir) if os.path.isdir(os.path.join(libdir, d)))
for d in mods:
    if d not in allowed:
        errors.append(f"lib/{d}/ is not placed in the layering table")
for mod in allowed:
    if mod not in mods:
        errors.append(f"the table's module {mod} has no lib/{mod}/")

incdir = os.path.join(src, "include", "txscale")
pub = sorted(f for f in os.listdir(incdir) if f.endswith(".h"))
for h in pub:
    if h != "txscale.h" and h not in owner:
        errors.append(f"include/txscale/{h} is owned by no module")

inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)

def check(path, mod, rel):
    ok = allowed.get(mod, set()) | {mod}
    body = open(path, encoding="utf-8", errors="replace").read()
    for kind, name in inc_re.findall(body):
        lineno = body[: body.find(name)].count("\n") + 1
        where = f"{rel}:{lineno}"
        if kind == "<":
            if not name.startswith("txscale/"):
                continue
            h = name[len("txscale/"):]
            if h == "txscale.h":
                errors.append(f"{where}: includes the umbrella <txscale/txscale.h>")
                continue
            o = owner.get(h)
            if o is None:
                errors.append(f"{where}: <{name}> is no module's header")
            elif o not in ok:
                errors.append(f"{where}: module {mod} may not include <{name}> (module {o})")
        else:
            if "/" in name:
                o = name.split("/", 1)[0]
                if o not in allowed:
                    errors.append(f'{where}: "{name}" names no module')
                elif o not in ok:
                    errors.append(f'{where}: module {mod} may not include "{name}" (module {o})')
                elif not os.path.exists(os.path.join(libdir, name)):
                    errors.append(f'{where}: "{name}" does not exist')
            elif not os.path.exists(os.path.join(os.path.dirname(path), name)):
                errors.append(f'{where}: "{name}" is not in {os.path.dirname(rel)}/')

n = 0
for d in mods:
    for root, _, files in os.walk(os.path.join(libdir, d)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                p = os.path.join(root, f)
                check(p, d, os.path.relpath(p, src))
                n += 1
for h in pub:
    if h in owner:
        check(os.path.join(incdir, h), owner[h], f"include/txscale/{h}")
        n += 1

if errors:
    for e in errors:
        print("FAIL:", e, file=sys.stderr)
    sys.exit(1)
print(f"layering: {len(allowed)} modules, {n} files, every include within the rule")
