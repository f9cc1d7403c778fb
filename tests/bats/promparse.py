#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# promparse.py -- a strict reader of the Prometheus text exposition format
"""Usage: promparse.py < METRICS

Read the text exposition format (version 0.0.4) on stdin and check it as
Prometheus and node_exporter's textfile collector would: metric and label
names, label values with only the escapes \\\\, \\" and \\n, one HELP and
one TYPE per family before its samples, the samples of a family together,
no series twice, counters named *_total, values that parse as floats.
On success print one JSON object: {"types": {family: type}, "samples":
[{"name", "labels", "value"}]}; on the first error print it and exit 1.
"""
import json
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class Bad(Exception):
    pass


def value(s):
    """a sample value as Go's ParseFloat takes it"""
    if s in ("NaN", "+Inf", "-Inf"):
        return float(s.replace("Inf", "inf"))
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", s):
        raise Bad("bad value %r" % s)
    return float(s)


def labels(s, i):
    """the label set starting after '{' at s[i]; (dict, index after '}')"""
    out = {}
    while True:
        if s[i] == "}":
            return out, i + 1
        m = LABEL.match(s, i)
        if not m:
            raise Bad("bad label name at %r" % s[i:])
        name = m.group(0)
        if name.startswith("__"):
            raise Bad("reserved label name %s" % name)
        i = m.end()
        if s[i:i + 2] != '="':
            raise Bad("no =\" after label %s" % name)
        i += 2
        v = []
        while s[i] != '"':
            if s[i] == "\\":
                esc = {"\\": "\\", '"': '"', "n": "\n"}.get(s[i + 1])
                if esc is None:
                    raise Bad("bad escape \\%s" % s[i + 1])
                v.append(esc)
                i += 2
            elif s[i] == "\n":
                raise Bad("newline in a label value")
            else:
                v.append(s[i])
                i += 1
        i += 1
        if name in out:
            raise Bad("label %s twice" % name)
        out[name] = "".join(v)
        if s[i] == ",":
            i += 1
        elif s[i] != "}":
            raise Bad("bad label list at %r" % s[i:])


def parse(text):
    types, helps, samples, seen, done = {}, {}, [], set(), set()
    current = None
    if text and not text.endswith("\n"):
        raise Bad("the last line has no newline")
    for line in text.split("\n")[:-1]:
        if not line.strip():
            continue
        if line.startswith("#"):
            f = line.split(" ", 3)
            if len(f) >= 3 and f[1] in ("HELP", "TYPE"):
                fam = f[2]
                if not NAME.fullmatch(fam):
                    raise Bad("bad family name %r" % fam)
                if fam in done:
                    raise Bad("family %s comes back after another" % fam)
                table = helps if f[1] == "HELP" else types
                if fam in table:
                    raise Bad("second %s for %s" % (f[1], fam))
                if f[1] == "TYPE":
                    if len(f) != 4 or f[3] not in TYPES:
                        raise Bad("bad TYPE line %r" % line)
                    if any(s["name"] == fam for s in samples):
                        raise Bad("TYPE of %s after its samples" % fam)
                    if f[3] == "counter" and not fam.endswith("_total"):
                        raise Bad("counter %s is not named *_total" % fam)
                    table[fam] = f[3]
                else:
                    table[fam] = f[3] if len(f) == 4 else ""
                if current and current != fam:
                    done.add(current)
                current = fam
            continue
        m = NAME.match(line)
        if not m:
            raise Bad("bad sample line %r" % line)
        name, i = m.group(0), m.end()
        lab = {}
        if i < len(line) and line[i] == "{":
            lab, i = labels(line + "\0", i + 1)
        rest = line[i:].split(" ")
        if not rest or rest[0] != "" or len(rest) not in (2, 3):
            raise Bad("bad sample line %r" % line)
        v = value(rest[1])
        if len(rest) == 3 and not re.fullmatch(r"-?\d+", rest[2]):
            raise Bad("bad timestamp in %r" % line)
        if name in done:
            raise Bad("samples of %s apart from each other" % name)
        if current and current != name:
            done.add(current)
        current = name
        key = (name, tuple(sorted(lab.items())))
        if key in seen:
            raise Bad("series twice: %r" % (key,))
        seen.add(key)
        samples.append({"name": name, "labels": lab, "value": v})
    for s in samples:
        if s["name"] not in types:
            raise Bad("%s has no TYPE" % s["name"])
    return {"types": types, "samples": samples}


def main():
    try:
        out = parse(sys.stdin.read())
    except (Bad, IndexError) as e:
        print("promparse: %s" % e)
        sys.exit(1)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
