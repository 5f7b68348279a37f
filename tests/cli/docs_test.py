#!/usr/bin/env python3
"""What the documentation promises a reader, checked against the tree.

* LICENSE is the Apache License 2.0, whole (Debian's copy of the standard
  text, /usr/share/common-licenses/Apache-2.0, from base-files), and the
  README names it.
* Every Markdown table in README.md, docs/ and examples/ renders: a header
  row, then a delimiter row, with a blank line before and after (a line of
  text glued to a table becomes one of its rows, or the table is no table).
* The README and docs/operations.md give the PodDisruptionBudget that
  deploy/base/pdb.yaml ships.
* The reload commands work beside `luascale sim`: by the pid file of
  `run --pid-file`, never by `pidof luascale`; examples/custom-policy's
  README does not say the daemon is missing.

usage: docs_test.py SOURCE_DIR
"""
import glob
import os
import re
import sys

SRC = sys.argv[1]
os.chdir(SRC)
passed = failed = 0


def ok(cond, name, why=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok - " + name)
    else:
        failed += 1
        print("not ok - " + name)
        for line in str(why).splitlines()[:20]:
            print("#   " + line)
    return cond


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


readme = read("README.md")

# ---- LICENSE ----
debian = "/usr/share/common-licenses/Apache-2.0"
have = read("LICENSE") if os.path.exists("LICENSE") else ""
if os.path.exists(debian):
    ok(have == read(debian), "LICENSE is the whole Apache License 2.0 text (as Debian ships it)",
       "LICENSE: %d bytes, %s: %d bytes" % (len(have), debian, len(read(debian))))
else:
    ok("Apache License" in have and "Version 2.0, January 2004" in have and
       "END OF TERMS AND CONDITIONS" in have and "APPENDIX: How to apply" in have,
       "LICENSE is the whole Apache License 2.0 text")
m = re.search(r"^## License\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
ok(m is not None and "Apache License, Version 2.0" in m.group(1) and "LICENSE" in m.group(1),
   "the README's License section names the Apache License 2.0 and LICENSE",
   m.group(0) if m else "no '## License' section")

# ---- tables ----
DELIM = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
files = ["README.md"] + sorted(glob.glob("docs/**/*.md", recursive=True)) + \
    sorted(glob.glob("examples/**/*.md", recursive=True))
for path in files:
    lines = read(path).split("\n")
    bad, fence, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("|"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].startswith("|"):
            j += 1
        if j - i < 2 or not DELIM.match(lines[i + 1]):
            bad.append("%s:%d: no header and delimiter rows: %s" % (path, i + 1, line[:70]))
        cells = line.count("|")
        if j - i >= 2 and lines[i + 1].count("|") != cells:
            bad.append("%s:%d: the delimiter row has another number of columns" % (path, i + 2))
        if i > 0 and lines[i - 1].strip():
            bad.append("%s:%d: text right before the table" % (path, i))
        if j < len(lines) and lines[j].strip():
            bad.append("%s:%d: text right after the table: %s" % (path, j + 1, lines[j][:70]))
        i = j
    ok(not bad, "every table of %s has a header row and stands apart" % path, "\n".join(bad))

# ---- the PodDisruptionBudget ----
pdb = read("deploy/base/pdb.yaml")
shipped = re.findall(r"^\s+(minAvailable|maxUnavailable):\s*(\S+)", pdb, re.M)
ok(len(shipped) == 1, "deploy/base/pdb.yaml sets one of minAvailable, maxUnavailable", shipped)
for path in ("README.md", "docs/operations.md"):
    text = re.sub(r"\s+", " ", read(path))
    said = re.findall(r"PodDisruptionBudget[^`.]{0,12}`(minAvailable|maxUnavailable): *([^`]+)`", text)
    ok(said and all(s == shipped[0] for s in said),
       "%s gives the PodDisruptionBudget deploy/ ships (%s)" % (path, shipped[:1]), said)

# ---- reloading ----
cmds = [l for l in readme.split("\n") if re.search(r"\bkill\b.*pidof", l)]
ok(not cmds, "no README command signals by `pidof luascale` (it finds luascale sim too)", "\n".join(cmds))
ok('kill -HUP "$(cat /tmp/luascale.pid)"' in readme and "--pid-file /tmp/luascale.pid" in readme,
   "the README's walk-through reloads through run's --pid-file")
custom = read("examples/custom-policy/README.md")
ok("not in this release" not in custom and "--pid-file" in custom and 'kill -HUP "$(cat' in custom,
   "examples/custom-policy/README.md reloads the daemon by its pid file",
   "\n".join(l for l in custom.split("\n") if "release" in l or "kill" in l))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
