#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# check.py -- check one rpmemctl --json output against tests/json/schema.json
"""
check.py SCHEMA COMMAND < OUTPUT
    OUTPUT (what `rpmemctl COMMAND --json ...` wrote to stdout) must be one
    line holding one JSON object whose keys are exactly those SCHEMA lists
    for COMMAND's object, at every depth, each of its type; its "schema" is
    SCHEMA's and its "command" is COMMAND. Prints one line per mismatch
    ("PATH: what is wrong") and exits 1 if there is any, 0 if none.

check.py --keys SCHEMA
    Prints every key SCHEMA names, one a line, sorted.

The type language is described in SCHEMA's "$comment".
"""

import json
import sys

SCALARS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float))
    and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def load(path):
    """load -- the schema, with every type it names resolved or an error"""
    with open(path, encoding="utf-8") as f:
        s = json.load(f)
    objs = s["objects"]

    def resolve(t, where):
        if isinstance(t, list):
            if len(t) != 1:
                sys.exit(f"{path}: {where}: an array type has one element")
            resolve(t[0], where)
            return
        for alt in t.split("|"):
            if alt not in SCALARS and alt not in objs:
                sys.exit(f"{path}: {where}: unknown type '{alt}'")

    for name, keys in objs.items():
        for k, t in keys.items():
            resolve(t, f"{name}.{k}")
    for cmd, obj in s["commands"].items():
        if obj not in objs:
            sys.exit(f"{path}: command {cmd}: unknown object '{obj}'")
    return s


def describe(v):
    """describe -- the JSON type of a value, for messages"""
    for name in ("boolean", "integer", "number", "string", "null"):
        if SCALARS[name](v):
            return name
    return "array" if isinstance(v, list) else "object"


def check_value(objs, t, v, path, errs):
    """check_value -- v is of type t; mismatches appended to errs"""
    if isinstance(t, list):
        if not isinstance(v, list):
            errs.append(f"{path}: is {describe(v)}, not an array")
            return
        for i, e in enumerate(v):
            check_value(objs, t[0], e, f"{path}[{i}]", errs)
        return
    alts = t.split("|")
    for alt in alts:
        if alt in SCALARS and SCALARS[alt](v):
            return
    objalts = [a for a in alts if a in objs]
    if objalts and isinstance(v, dict):
        check_object(objs, objalts[0], v, path, errs)
        return
    errs.append(f"{path}: is {describe(v)}, not {t}")


def check_object(objs, name, v, path, errs):
    """check_object -- v has exactly the keys of objs[name], each typed"""
    spec = objs[name]
    want = {k.rstrip("?"): t for k, t in spec.items()}
    optional = {k.rstrip("?") for k in spec if k.endswith("?")}
    for k in spec:
        k = k.rstrip("?")
        if k not in v and k not in optional:
            errs.append(f"{path}.{k}: missing ({name})")
    for k, e in v.items():
        if k not in want:
            errs.append(f"{path}.{k}: not in the schema ({name})")
        else:
            check_value(objs, want[k], e, f"{path}.{k}", errs)


def main(argv):
    if len(argv) == 3 and argv[1] == "--keys":
        s = load(argv[2])
        keys = {k.rstrip("?") for o in s["objects"].values() for k in o}
        print("\n".join(sorted(keys)))
        return 0
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    s = load(argv[1])
    cmd = argv[2]
    if cmd not in s["commands"]:
        print(f"{cmd}: not a command of the schema")
        return 1
    text = sys.stdin.read()
    lines = text.split("\n")
    if len(lines) != 2 or lines[1] != "":
        print(f"output: {len(lines) - 1} lines, not one line")
        return 1
    try:
        v = json.loads(lines[0])
    except ValueError as e:
        print(f"output: not JSON: {e}")
        return 1
    errs = []
    if not isinstance(v, dict):
        errs.append(f"output: is {describe(v)}, not an object")
    else:
        check_object(s["objects"], s["commands"][cmd], v, cmd, errs)
        if v.get("schema") != s["schema"]:
            errs.append(f"{cmd}.schema: {v.get('schema')!r}, not "
                        f"{s['schema']}")
        if v.get("command") != cmd:
            errs.append(f"{cmd}.command: {v.get('command')!r}, not "
                        f"'{cmd}'")
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
