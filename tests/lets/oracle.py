#!/usr/bin/env python3
"""oracle.py CASE DIR: writes the input files of a case of tests/lets_lookups.sh into DIR and the
outputs sf-exec must write into DIR/expected/, computed here independently of sf.

Cases: let (let.xml), columns (columns.xml)."""
import os
import random
import sys


def fmt(v):
    """A value as sf writes it in CSV (docs/language.md, "Number and value text")."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        r = repr(v)
        return r[:-2] if r.endswith(".0") else r
    return str(v)


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(fmt(v) for v in r) + "\n")


def case_let(d, rng):
    syms = ["a", "b", "c", "dd"]
    rows = [(rng.choice(syms), rng.randrange(0, 40) / 4, rng.randrange(0, 20)) for _ in range(3000)]
    write_csv(os.path.join(d, "in.csv"), ["sym", "price", "vol"], rows)
    state = {}  # sym -> [n, acc]
    f_out = []
    for sym, price, vol in rows:
        value = price * float(vol)
        st = state.setdefault(sym, [0, 0.0])
        prev = st[0]
        st[0] += 1
        st[1] += value
        n, acc = st
        label = sym + ("!" if n > 1 else "")
        if value > 1.0 or label == "a!":
            f_out.append((sym, value, n, prev, label, acc))
    g_out = [r for r in f_out if len(r[4]) <= 2]
    h_out = []
    for sym, value, n, prev, label, acc in g_out:
        c = n % 3
        for i in range(c):
            h_out.append((sym, value, i * c, prev, label, acc))
    windows = {}
    a_out = []
    for sym, value, n, prev, label, acc in h_out:
        w = windows.setdefault(sym, [])
        w.append((value * 2.0, n))
        if len(w) == 2:
            a_out.append((sym, sum(x for x, _ in w), len(w) + sum(1 if m > 0 else 0 for _, m in w)))
            w.clear()
    exp = os.path.join(d, "expected")
    write_csv(os.path.join(exp, "h.csv"), ["sym", "value", "n", "before", "label", "acc"], h_out)
    write_csv(os.path.join(exp, "a.csv"), ["sym", "total", "big"], a_out)


def case_columns(d, rng):
    header = ["note", "vol", "extra", "sym", "x2", "price"]
    rows = []
    for k in range(2000):
        rows.append(('"a, b"' if k % 7 == 0 else "n%d" % k, rng.randrange(-50, 50), rng.random(),
                     rng.choice(["p", "q", "r"]), "", rng.randrange(0, 400) / 8))
    with open(os.path.join(d, "wide.csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r[0:1]) + "," + ",".join(fmt(v) for v in r[1:]) + "\n")
    out = [(sym, price, vol * 2) for _, vol, _, sym, _, price in rows]
    write_csv(os.path.join(d, "expected", "t.csv"), ["sym", "price", "vol"], out)


def main():
    case, d = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    rng = random.Random(21)
    {"let": case_let, "columns": case_columns}[case](d, rng)


main()
