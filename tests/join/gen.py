#!/usr/bin/env python3
"""gen.py: one test case of the Join operator, with its expected output computed here.

    python3 gen.py CASE DIR [ROWS]

writes DIR/l.csv, DIR/r.csv (the two sides), DIR/j.xml (the graph: two FileSources with event
time, a Join, a FileSink), DIR/expected.csv (what the FileSink must write) and DIR/late.json
({"j": late tuples, "kept_peak": the most tuples the Join keeps at once}). CASE picks the parameters and seeds the data: the window (interval with
negative, zero and positive bounds, or tumbling time), lateness, a `where`, one or two key pairs
(an int and a string), the tick period, and how far out of time order the inputs go. Cases
0..FIXED-1 are written by hand (the edges: matches at exactly LOWER and UPPER, keys on one side
only, ties in time between the sides, a side that ends first, an empty side). ROWS (random cases
only) sets the rows of each side, for the checkpoint tests' longer runs.

The expected output follows docs/language.md, "Joins", read literally, with the event-time rules
of tests/eventtime/oracle.py (sources' ticks, the time-ordered fan-in), imported from there:
- the inputs are one time-ordered fan-in of left then right; the Join's current tick is the
  fan-in's;
- a tuple is late when time + lateness < the current tick (tumbling: when end + lateness <= the
  current tick for its window), counted and dropped;
- any other is matched with the kept tuples of the other side in their arrival order: equal keys,
  r.time - l.time in [LOWER, UPPER] (tumbling: the same window), `where`; each match emitted;
- lets are computed per match (the `where` on the distance reads one);
- then it is kept: a left tuple until the tick exceeds time + UPPER + lateness, a right one until
  it exceeds time - LOWER + lateness (tumbling: until its window is closed)."""
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "eventtime"))
from oracle import INF, source, time_merge, csv_text  # noqa: E402

FIXED = 4


def params(case):
    rnd = random.Random(case * 7919 + 13)
    if case < FIXED:
        p = [dict(window=("interval", -5, 10), lateness=0, where=None, keys=1, tick=None),
             dict(window=("interval", 0, 0), lateness=0, where=None, keys=2, tick=None),
             dict(window=("tumbling", 10), lateness=0, where=None, keys=1, tick=None),
             dict(window=("interval", 2, 6), lateness=3, where="d", keys=1, tick=4)][case]
    else:
        kind = rnd.choice(["interval", "interval", "interval", "tumbling"])
        if kind == "interval":
            lo = rnd.randint(-15, 10)
            hi = lo + rnd.randint(0, 20)
            window = ("interval", lo, hi)
        else:
            window = ("tumbling", rnd.choice([5, 10, 16]))
        p = dict(window=window, lateness=rnd.choice([0, 0, 3, 10]), where=rnd.choice([None, None, "a", "d"]),
                 keys=rnd.choice([1, 1, 2]), tick=rnd.choice([None, None, 1, 3, 7]))
    p["rnd"] = rnd
    return p


def fixed_rows(case):
    if case == 0:  # bounds exactly; a key on one side only (2 left, 3 right); left ends first
        left = [(1, "x", 0), (2, "y", 3), (1, "z", 7), (1, "w", 20)]
        right = [(1, "p", -5), (1, "q", 10), (1, "r", 11), (3, "t", 13), (1, "u", 25), (1, "v", 30), (1, "s", 40)]
    elif case == 1:  # ties in time between the sides, both orders of arrival; two key pairs
        left = [(1, "a", 5), (1, "b", 5), (2, "a", 5), (1, "a", 6), (1, "a", 6)]
        right = [(1, "a", 5), (1, "b", 5), (1, "a", 6), (2, "b", 5)]
    elif case == 2:  # tumbling: window edges, negative times, the right side empty after two rows
        left = [(1, "x", -11), (1, "y", -1), (1, "z", 0), (1, "w", 9), (1, "v", 10), (1, "u", 19)]
        right = [(1, "p", -10), (1, "q", 9)]
    else:  # out of order within and beyond the lateness: some late, some just in time
        left = [(1, "x", 10), (1, "y", 4), (1, "z", 20), (1, "w", 14), (1, "v", 30), (1, "u", 15)]
        right = [(1, "p", 12), (1, "q", 16), (1, "r", 13), (1, "s", 26), (1, "t", 22), (1, "o", 31)]
    return left, right


def random_rows(rnd, rows=None):
    def side(n, names):
        rows, t = [], rnd.randint(-20, 5)
        for _ in range(n):
            t += rnd.choice([0, 0, 1, 1, 2, 3, 5])
            tt = t - (rnd.randint(1, 12) if rnd.random() < 0.15 else 0)  # out of order
            rows.append((rnd.randint(1, 4), rnd.choice(names), tt))
        return rows
    n = rnd.randint(0, 60) if rows is None else rows
    m = rnd.randint(0, 60) if rows is None else rows
    return side(n, ["a", "b", "c,d", "e\"f"]), side(m, ["a", "b", "g", "c,d"])


def join(items, p):
    """The Join of the merged items: (matches in emission order, late count)."""
    window, lateness = p["window"], p["lateness"]
    tick = None  # the current tick; None: none yet
    kept = [[], []]  # per side: [time, keep-until, row] in arrival order
    out = []
    late = 0
    peak = 0  # the most tuples kept at once

    def start(t):
        return (t // window[1]) * window[1]

    def key(row, side):
        if p["keys"] == 1:
            return (row["k"],)
        return (row["k"], row["a"] if side == 0 else row["b"])

    for it in items:
        if it[0] == "tick":
            tick = it[1]
            for s in (0, 1):
                kept[s] = [x for x in kept[s] if not tick > x[1]]
            continue
        row = it[1]
        side = row["__side__"]
        t = row["__time__"]
        if window[0] == "interval":
            is_late = tick is not None and t + lateness < tick
        else:
            is_late = tick is not None and start(t) + window[1] + lateness <= tick
        if is_late:
            late += 1
            continue
        for x in kept[1 - side]:
            if key(x[2], 1 - side) != key(row, side):
                continue
            l, r = (row, x[2]) if side == 0 else (x[2], row)
            if window[0] == "interval":
                ok = window[1] <= r["rts"] - l["ts"] <= window[2]
            else:
                ok = start(l["ts"]) == start(r["rts"])
            if ok and p["where"] == "a":
                ok = l["a"] != r["b"]
            if ok and p["where"] == "d":
                ok = r["rts"] - l["ts"] != 3
            if ok:
                out.append({"k": l["k"], "a": l["a"], "b": r["b"], "ts": l["ts"], "d": r["rts"] - l["ts"],
                            "ab": l["a"] + r["b"]})
        if window[0] == "interval":
            until = t + (window[2] if side == 0 else -window[1]) + lateness
        else:
            until = start(t) + window[1] + lateness - 1
        if tick is None or until >= tick:  # (one no later tick could let match is not kept)
            kept[side].append([t, until, row])
            peak = max(peak, len(kept[0]) + len(kept[1]))
    return out, late, peak


def main():
    case, d = int(sys.argv[1]), sys.argv[2]
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else None  # rows per side (random case): a larger input
    p = params(case)
    left, right = fixed_rows(case) if case < FIXED else random_rows(p["rnd"], rows)
    with open(os.path.join(d, "l.csv"), "w") as f:
        f.write("k,a,ts\n" + "".join("%d,%s,%d\n" % (k, csv_text(a), t) for k, a, t in left))
    with open(os.path.join(d, "r.csv"), "w") as f:
        f.write("k,b,rts\n" + "".join("%d,%s,%d\n" % (k, csv_text(b), t) for k, b, t in right))
    window = p["window"]
    wtext = "interval %d %d" % (window[1], window[2]) if window[0] == "interval" else "tumbling time %d" % window[1]
    # the default tick: the gcd of the window's size or non-zero bounds
    if p["tick"]:
        period = p["tick"]
    elif window[0] == "tumbling":
        period = window[1]
    else:
        g = 0
        for b in window[1:]:
            if b:
                g = abs(b) if g == 0 else __import__("math").gcd(g, abs(b))
        period = g or 1
    tick = '<param name="tick">%d</param>' % p["tick"] if p["tick"] else ""
    on = "left.k = right.k" + (" and right.b = left.a" if p["keys"] == 2 else "")
    where = {None: "", "a": '<param name="where">left.a != right.b</param>',
             "d": '<param name="where">gap != 3</param>'}[p["where"]]
    # with the `where` on the distance, a let names it (a let per match, read by a set and `where`)
    let = '\n    <let name="gap" type="int">right.rts - left.ts</let>' if p["where"] == "d" else ""
    dset = "gap" if p["where"] == "d" else "right.rts - left.ts"
    late = '<param name="lateness">%d</param>' % p["lateness"] if p["lateness"] else ""
    with open(os.path.join(d, "j.xml"), "w") as f:
        f.write("""<?xml version="1.0" encoding="UTF-8"?>
<graph xmlns="urn:streamfission:graph:1" name="join%d">
  <schema name="L"><attr name="k" type="int"/><attr name="a" type="string"/><attr name="ts" type="int"/></schema>
  <schema name="R"><attr name="k" type="int"/><attr name="b" type="string"/><attr name="rts" type="int"/></schema>
  <schema name="O"><attr name="k" type="int"/><attr name="a" type="string"/><attr name="b" type="string"/><attr name="ts" type="int"/><attr name="d" type="int"/><attr name="ab" type="string"/></schema>
  <operator name="l" kind="FileSource"><output stream="Ls" schema="L"/><param name="file">l.csv</param><param name="time">ts</param>%s</operator>
  <operator name="r" kind="FileSource"><output stream="Rs" schema="R"/><param name="file">r.csv</param><param name="time">rts</param>%s</operator>
  <operator name="j" kind="Join">
    <input stream="Ls"/><input stream="Rs"/>
    <output stream="Os" schema="O"/>
    <param name="on">%s</param>
    <param name="window">%s</param>%s%s%s
    <set attr="k">left.k</set>
    <set attr="d">%s</set>
    <set attr="ab">left.a + right.b</set>
  </operator>
  <operator name="out" kind="FileSink"><input stream="Os"/><param name="file">out.csv</param></operator>
</graph>
""" % (case, tick, tick, on, wtext, where, late, let, dset))
    rows_l = [{"k": k, "a": a, "ts": t, "__side__": 0, "__time__": t} for k, a, t in left]
    rows_r = [{"k": k, "b": b, "rts": t, "__side__": 1, "__time__": t} for k, b, t in right]
    merged = time_merge([source(rows_l, "ts", period), source(rows_r, "rts", period)])
    out, nlate, peak = join(merged, p)
    attrs = ["k", "a", "b", "ts", "d", "ab"]
    with open(os.path.join(d, "expected.csv"), "w") as f:
        f.write(",".join(attrs) + "\n")
        for o in out:
            row = ",".join(csv_text(o[a]) for a in attrs)
            f.write(('""' if row == "" else row) + "\n")
    with open(os.path.join(d, "late.json"), "w") as f:
        json.dump({"j": nlate, "kept_peak": peak}, f)


if __name__ == "__main__":
    main()
