#!/usr/bin/env bats
# SPDX-License-Identifier: BSD-3-Clause
# docs.bats -- the documentation describes the tree as it is: every path
# of a project folder that README.md, docs/*.md, docs/design/*.md or a man
# page names exists (a moved or deleted file leaves no stale reference
# behind); ARCHITECTURE.md and PERFORMANCE.md stay reference-sized, every
# design record has its three sections, and what the architecture and the
# records name in code (files, functions) and what the tree cites of
# ARCHITECTURE.md (its sections) exists

load helpers

@test "README.md, docs/*.md and the man pages name only files and folders that exist" {
	cd "$TOP"
	run python3 - README.md docs/*.md docs/design/*.md man/*.[1-8] <<'PY'
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

@test "ARCHITECTURE.md is at most 800 lines, PERFORMANCE.md at most 600" {
	cd "$TOP"
	local a p
	a=$(wc -l <docs/ARCHITECTURE.md)
	p=$(wc -l <docs/PERFORMANCE.md)
	echo "ARCHITECTURE.md: $a lines, PERFORMANCE.md: $p lines"
	[ "$a" -le 800 ]
	[ "$p" -le 600 ]
}

@test "every design record has Context, Decision and Consequences, and the index lists it" {
	cd "$TOP"
	local f n bad=0
	n=0
	for f in docs/design/*.md; do
		[ "$(basename "$f")" = README.md ] && continue
		n=$((n + 1))
		for s in Context Decision Consequences; do
			if ! grep -qx "## $s" "$f"; then
				echo "$f: no '## $s' section"
				bad=1
			elif ! awk -v s="## $s" '$0 == s { in_s = 1; next }
			     /^## / { in_s = 0 } in_s && NF { n++ }
			     END { exit !n }' "$f"; then
				echo "$f: '## $s' is empty"
				bad=1
			fi
		done
		if ! grep -qF "]($(basename "$f"))" docs/design/README.md; then
			echo "$f: not in docs/design/README.md"
			bad=1
		fi
	done
	echo "$n records"
	[ "$n" -gt 0 ]
	[ "$bad" -eq 0 ]
}

@test "ARCHITECTURE.md and the design records hold no dated entries" {
	cd "$TOP"
	run grep -nE '\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b|\b[Ii]ssue [0-9]+|\b[Ss]ession [0-9]+\b' \
		docs/ARCHITECTURE.md docs/design/*.md
	echo "$output"
	[ "$status" -eq 1 ]
}

@test "every section of ARCHITECTURE.md the tree cites exists" {
	cd "$TOP"
	run python3 - <<'PY'
import re, subprocess, sys
heads = [re.sub(r'\s+', ' ', l.lstrip('#').strip())
         for l in open('docs/ARCHITECTURE.md', encoding='utf-8')
         if l.startswith('#')]
files = subprocess.run(['git', 'ls-files'], capture_output=True,
                       text=True).stdout.split()
bad = []
for f in files:
    try:
        t = open(f, encoding='utf-8').read()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        continue
    if 'ARCHITECTURE.md' not in t:
        continue
    # a citation may wrap onto the next line of a comment
    j = re.sub(r'\n[ \t]*(?:\*|#|//|;)?[ \t]*', ' ', t)
    for m in re.finditer(r'ARCHITECTURE\.md\)?,?\s*"([^"]+)"', j):
        name = re.sub(r'\s+', ' ', m.group(1)).strip()
        if not any(h.startswith(name) for h in heads):
            bad.append('%s: "%s"' % (f, name))
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "the files and functions ARCHITECTURE.md and the design records name exist" {
	cd "$TOP"
	run python3 - <<'PY'
import glob, os, re, subprocess, sys
docs = ['docs/ARCHITECTURE.md'] + sorted(glob.glob('docs/design/*.md'))
tracked = subprocess.run(['git', 'ls-files'], capture_output=True,
                         text=True).stdout.split()
src = [f for f in tracked
       if re.search(r'\.(c|h|map|py|sh|bats|in|conf|[1-8])$|^ocf/', f)]
base = {os.path.basename(f) for f in tracked}
words = set()
for f in src:
    if os.path.isfile(f):
        words.update(re.findall(r'[A-Za-z_][A-Za-z0-9_]*',
                                open(f, encoding='utf-8',
                                     errors='replace').read()))
# other projects' headers and calls, named as models or dependencies
ext = {'librpma.h', 'xxh_x86dispatch.h', 'sd-daemon.h', 'ndctl_set_log_fn'}
bad = []
for d in docs:
    for n, line in enumerate(open(d, encoding='utf-8'), 1):
        for tok in re.findall(r'`([^`]+)`', line):
            for w in re.findall(r'[\w./-]+\.[ch]\b', tok):
                if os.path.basename(w) not in base and w not in ext:
                    bad.append('%s:%d: file %s' % (d, n, w))
            m = re.fullmatch(r'([a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9])(\(\))?',
                             tok)
            if m and m.group(1) not in words and m.group(1) not in ext:
                bad.append('%s:%d: name %s' % (d, n, m.group(1)))
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

# literal_sizes -- every array declared with a literal size in the product's
# .c files under the folders given, one "file:line: name[size]" a line
literal_sizes() {
	python3 - "$@" <<'PY'
import re, subprocess, sys
files = [f for f in subprocess.run(['git', 'ls-files'] + sys.argv[1:],
                                   capture_output=True,
                                   text=True).stdout.split()
         if f.endswith('.c')]
decl = re.compile(r'^\s*(?:(?:static|const|unsigned|signed|volatile|'
                  r'__thread|register)\s+)*(?:char|int|long|short|unsigned|'
                  r'double|float|bool|size_t|ssize_t|u?int(?:8|16|32|64)_t|'
                  r'struct\s+\w+|union\s+\w+|enum\s+\w+|\w+_t)\b'
                  r'(?:\s|\*|const)*\w+\s*\[')
arr = re.compile(r'\b(\w+)\s*\[\s*([0-9]+)\s*\]')
for f in files:
    t = open(f, encoding='utf-8').read()
    t = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), t,
               flags=re.S)
    t = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', t)
    for n, line in enumerate(t.split('\n'), 1):
        if not decl.match(line):
            continue
        # an initializer holds no declaration
        line = re.sub(r'\{[^{}]*\}', '', line).split('{')[0]
        for m in arr.finditer(line):
            pre = line[:m.start()].rstrip()
            if pre and pre[-1] in '=(+-/%<>!|?:[':
                continue  # an index or an expression, not a declaration
            print('%s:%d: %s[%s]' % (f, n, m.group(1), m.group(2)))
PY
}

@test "cmd/ and daemon/ declare no array with a literal size, lib/ no more than it does" {
	cd "$TOP"
	# a buffer's size is named where it is shared (cmd/cmd.h,
	# lib/common/util.h, daemon/config/config.h...) or at the top of its
	# file, so a caller's buffer and the callee's idea of it cannot drift;
	# lib/ keeps one: net.c's pipe, whose int p[2] is pipe(2)'s own shape
	local lib_max=1
	run literal_sizes cmd daemon
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run literal_sizes lib
	echo "lib/: $(echo "$output" | grep -c .) of at most $lib_max"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c .)" -le "$lib_max" ]
}

@test "the links of ARCHITECTURE.md and the design records lead to files that exist" {
	cd "$TOP"
	run python3 - docs/ARCHITECTURE.md docs/design/*.md <<'PY'
import os, re, sys
bad = []
for f in sys.argv[1:]:
    for n, line in enumerate(open(f, encoding='utf-8'), 1):
        for m in re.finditer(r'\]\(([^)#:]+)(?:#[^)]*)?\)', line):
            p = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            if not os.path.exists(p):
                bad.append('%s:%d: %s' % (f, n, m.group(1)))
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
}
