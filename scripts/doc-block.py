#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The generated parts of a Markdown file: the lines between
"<!-- NAME -->" and "<!-- /NAME -->".

    scripts/doc-block.py get FILE NAME        print block NAME of FILE
    scripts/doc-block.py set FILE NAME < NEW  replace it with stdin

`make kernels-doc` and `make counters-doc` write README.md's blocks with
set; tests/integration/readme_counters.sh compares them with get.  Exit 1
when FILE has no such block (or more than one).
"""
import os
import re
import sys


def span(text, name):
    """(start, end) of the block's body in text, or exit 1."""
    pat = re.compile(r"^<!-- %s -->\n(.*?)^<!-- /%s -->$" % (re.escape(name), re.escape(name)),
                     re.S | re.M)
    found = list(pat.finditer(text))
    if len(found) != 1:
        sys.exit("%s: %d blocks <!-- %s --> ... <!-- /%s --> (want one)"
                 % (sys.argv[2], len(found), name, name))
    return found[0].span(1)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("get", "set"):
        sys.exit(__doc__)
    op, path, name = sys.argv[1:]
    with open(path) as f:
        text = f.read()
    a, b = span(text, name)
    if op == "get":
        sys.stdout.write(text[a:b])
        return
    new = sys.stdin.read()
    if new and not new.endswith("\n"):
        new += "\n"
    with open(path + ".new", "w") as f:
        f.write(text[:a] + new + text[b:])
    os.replace(path + ".new", path)


if __name__ == "__main__":
    main()
