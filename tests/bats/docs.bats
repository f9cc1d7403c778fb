#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# docs.bats -- the documentation describes the tree as it is: every path
# of a project folder that README.md, docs/*.md or a man page names
# exists (a moved or deleted file leaves no stale reference behind)

load helpers

@test "README.md, docs/*.md and the man pages name only files and folders that exist" {
	cd "$TOP"
	run python3 - README.md docs/*.md man/*.[1-8] <<'PY'
import os, re, sys
pat = re.compile(r'(?<![\w/.-])((?:lib|daemon|cmd|tests|docs|packaging|'
                 r'systemd|completion|man)/[\w./-]*\w)')
bad = []
for f in sys.argv[1:]:
    for n, line in enumerate(open(f, encoding='utf-8'), 1):
        for m in pat.finditer(line):
            p = m.group(1)
            if '*' not in p and not os.path.exists(p):
                bad.append('%s:%d: %s' % (f, n, p))
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
}
