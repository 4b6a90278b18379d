#!/usr/bin/env python3
"""docs/library.md's walk-throughs are the files the build compiles and runs:
every code block after an '<!-- include: PATH -->' line must be PATH's text,
byte for byte, and every example the doc names must exist.
usage: library_doc.py SRCDIR"""
import os
import re
import sys

src = sys.argv[1]
doc = open(os.path.join(src, "docs", "library.md"), encoding="utf-8").read()
blocks = re.findall(r"<!-- include: (\S+) -->\n```[a-z]*\n(.*?)```\n", doc, re.S)
bad = 0
if len(blocks) < 2:
    print("FAIL: docs/library.md has %d included blocks, expected the C and the Python walk-through" % len(blocks))
    bad = 1
for path, text in blocks:
    want = open(os.path.join(src, path), encoding="utf-8").read()
    if text != want:
        print("FAIL: docs/library.md's block of %s differs from the file (copy the file into the doc)" % path)
        bad = 1
for path in set(re.findall(r"examples/[a-z_]+\.(?:py|c)", doc)):
    if not os.path.exists(os.path.join(src, path)):
        print("FAIL: docs/library.md names %s, which does not exist" % path)
        bad = 1
print("%d blocks checked" % len(blocks))
sys.exit(bad)
