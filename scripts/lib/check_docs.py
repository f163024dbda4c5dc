#!/usr/bin/env python3
"""Keeps the maps true (issue 32): every path CONTRIBUTING.md and README.md name exists in the
repository, neither links outside it, and every ACCOUNTD_* variable the server's sources read is
documented in README.md. Prints each fault; exits 1 if there is any."""
import os, re, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.chdir(root)
faults = []
tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split("\n")
untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], capture_output=True, text=True).stdout.split("\n")
files = [f for f in tracked + untracked if f]
names = {os.path.basename(f) for f in files}
dirs = {os.path.dirname(f) for f in files}
for f in list(dirs):
    while f:
        f = os.path.dirname(f)
        dirs.add(f)

def exists(path):
    path = path.rstrip("/")
    for base in ["", "Sources/", "Tests/"]:
        candidate = base + path
        if candidate in files or candidate in dirs:
            return True
    return False

path_re = re.compile(r"`([A-Za-z0-9_.+/-]+(?:/|\.swift|\.md|\.sql|\.py|\.lua))`")
for doc in ["CONTRIBUTING.md", "README.md"]:
    text = open(doc).read()
    for line_number, line in enumerate(text.split("\n"), 1):
        for link in re.findall(r"\]\(([^)]+)\)", line):
            if link.startswith("..") or link.startswith("/"):
                faults.append(f"{doc}:{line_number}: links outside the repository: {link}")
            elif not link.startswith("http") and not exists(link.split("#")[0]):
                faults.append(f"{doc}:{line_number}: links to a missing file: {link}")
        for path in path_re.findall(line):
            if path.startswith("./.") or path.startswith(".venv") or path.startswith(".build"):
                continue  # what a run makes, git-ignored
            if path.startswith(".."):
                faults.append(f"{doc}:{line_number}: names a file outside the repository: {path}")
            elif "/" in path.rstrip("/"):
                if not exists(path):
                    faults.append(f"{doc}:{line_number}: names a path that does not exist: {path}")
            elif path.endswith(".swift") and path not in names:
                faults.append(f"{doc}:{line_number}: names a file that does not exist: {path}")

readme = open("README.md").read()
read = set()
for f in files:
    if f.startswith("Sources/") and f.endswith(".swift") and not f.startswith("Sources/AccountTesting/"):
        read.update(re.findall(r'"(ACCOUNTD_[A-Z0-9_]+)', open(f).read()))
for name in sorted(read):
    if name not in readme:
        faults.append(f"README.md: {name} is read by the server but not documented")

for fault in faults:
    print(fault, file=sys.stderr)
sys.exit(1 if faults else 0)
