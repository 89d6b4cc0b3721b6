#!/usr/bin/env python3
"""Checks that the C++ of README.md and docs/*.md is the C++ that the build compiles.

Every ```cpp block of a page must stand verbatim in a file of examples/snippets/, between
`// page: <page> block <n>` and `// page end` (n counts the page's cpp blocks from 1), and every
such region must still match its page. Usage: check-doc-snippets.py [REPO_ROOT]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)


def page_blocks(page):
    blocks, current = [], None
    for line in (root / page).read_text().split("\n"):
        if current is None and line.startswith("```cpp"):
            current = []
        elif current is not None and line.startswith("```"):
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


marker = re.compile(r"^// page: (\S+) block (\d+)\n(.*?)\n// page end$", re.M | re.S)
regions = {}
for source in sorted((root / "examples" / "snippets").glob("*.cpp")):
    for m in marker.finditer(source.read_text()):
        regions[(m.group(1), int(m.group(2)))] = (source.relative_to(root), m.group(3))

problems = []
pages = ["README.md"] + sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
for page in pages:
    for n, block in enumerate(page_blocks(page), start=1):
        found = regions.pop((page, n), None)
        if found is None:
            problems.append(f"{page}: cpp block {n} is in no file of examples/snippets/ "
                            f"(add it between '// page: {page} block {n}' and '// page end')")
        elif found[1] != block:
            problems.append(f"{page}: cpp block {n} differs from {found[0]}; make them equal")
for (page, n), (source, _) in sorted(regions.items()):
    problems.append(f"{source}: '// page: {page} block {n}' names no cpp block of {page}")

for p in problems:
    print(p)
checked = sum(len(page_blocks(p)) for p in pages)
print(f"{checked} cpp blocks in {len(pages)} pages, {len(problems)} problems")
sys.exit(1 if problems else 0)
