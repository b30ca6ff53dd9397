#!/usr/bin/env python3
"""oracle.py CASE DIR: writes the input files of a case of tests/lets_lookups.sh into DIR and the
outputs sf-exec must write into DIR/expected/, computed here independently of sf.

Cases: let (let.xml), columns (columns.xml), lookup (lookup.xml)."""
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
    v = str(v)
    if any(c in v for c in ',"\r\n'):
        return '"' + v.replace('"', '""') + '"'
    return v


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
        rows.append(("a, b" if k % 7 == 0 else "n%d" % k, rng.randrange(-50, 50), rng.random(),
                     rng.choice(["p", "q", "r"]), "", rng.randrange(0, 400) / 8))
    with open(os.path.join(d, "wide.csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(fmt(v) for v in r) + "\n")
    out = [(sym, price, vol * 2) for _, vol, _, sym, _, price in rows]
    write_csv(os.path.join(d, "expected", "t.csv"), ["sym", "price", "vol"], out)


def case_lookup(d, rng):
    curs = ["EUR", "GBP", "JPY", "CHF", "a,b", "USD"]
    table = {}
    for cur in curs[:-1]:  # no USD in the table: those orders never match
        for day in range(1, 31):
            if rng.random() < 0.7:
                table[(cur, day)] = (rng.randrange(1, 80) / 8, "n" + cur + str(day), rng.random() < 0.5)
    keys = list(table)
    rng.shuffle(keys)
    header = ["name", "junk", "day", "ok", "rate", "cur"]
    with open(os.path.join(d, "rates.csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for cur, day in keys:
            rate, name, ok = table[(cur, day)]
            f.write(",".join([fmt(name), "j", str(day), fmt(ok), fmt(rate), fmt(cur)]) + "\n")
    with open(os.path.join(d, "empty.csv"), "w") as f:
        f.write("rate,ok,cur,name,day\n")
    orders = [(k, rng.choice(curs), rng.randrange(0, 33), rng.randrange(0, 100)) for k in range(5000)]
    with open(os.path.join(d, "orders.csv"), "w") as f:
        f.write("id,cur,day,amount\n")
        for o in orders:
            f.write(",".join(fmt(v) for v in o) + "\n")
    drop, keep, empty = [], [], []
    for oid, cur, day, amount in orders:
        row = table.get((cur, day))
        rate, name, ok = row if row else (0.0, "", False)
        v = float(amount) * rate
        out = (oid, cur, day, amount, v, name + "/" + str(day), ok and v > 10.0)
        if row:
            drop.append(out)
        keep.append(out)
        empty.append((oid, cur, day, amount, 0.0, "", False))
    cols = ["id", "cur", "day", "amount", "value", "name", "ok"]
    write_csv(os.path.join(d, "expected", "drop.csv"), cols, drop)
    write_csv(os.path.join(d, "expected", "keep.csv"), cols, keep)
    write_csv(os.path.join(d, "expected", "empty.csv"), cols, empty)


def main():
    case, d = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    rng = random.Random(21)
    {"let": case_let, "columns": case_columns, "lookup": case_lookup}[case](d, rng)


main()
