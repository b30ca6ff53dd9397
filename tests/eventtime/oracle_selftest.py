#!/usr/bin/env python3
"""oracle_selftest.py: the oracle's operators on tiny inputs whose output was worked out by hand.

    python3 oracle_selftest.py      prints one line per case; exit status 1 if one failed

Each case writes out the items (ticks and tuples in stream order) it expects, derived step by step
in the comments from the rules of docs/language.md, "Event time", so that the oracle is checked
against the text and not against itself.
"""
import sys

import oracle as o

INF = o.INF
failed = 0


def check(name, got, want):
    global failed
    if got == want:
        print("oracle_selftest: OK    " + name)
    else:
        failed += 1
        print("oracle_selftest: FAIL  " + name)
        print("    want: %r" % (want,))
        print("    got:  %r" % (got,))


def rows(*times):
    """Rows of (k, t) pairs, or of times alone."""
    out = []
    for x in times:
        if isinstance(x, tuple):
            out.append({"k": x[0], "t": x[1]})
        else:
            out.append({"t": x})
    return out


def shape(items, attrs):
    """Items as ("tick", T) and plain tuples of the attributes, for comparison."""
    out = []
    for it in items:
        if it[0] == "tick":
            out.append(("tick", it[1]))
        else:
            out.append(tuple(it[1][a] for a in attrs))
    return out


def count_make(keys):
    def make(first, tuples, ws, we):
        d = {k: first[k] for k in keys}
        d.update({"ws": ws, "we": we, "n": len(tuples)})
        return d
    return make


# --- the source's ticks ----------------------------------------------------------------------
# P = 10: 5 (clock 5: the first tuple, preceded by tick 0); 3 (clock stays 5); 12 (clock 12
# passes 10: tick 10); 12 (nothing new); 25 (tick 20); 19 (behind: nothing); 30 exactly on a
# multiple (tick 30); the end: tick +inf.
items = o.source(rows(5, 3, 12, 12, 25, 19, 30), "t", 10)
check("source: ticks", shape(items, ["t"]),
      [("tick", 0), (5,), (3,), ("tick", 10), (12,), (12,), ("tick", 20), (25,), (19,),
       ("tick", 30), (30,), ("tick", INF)])
# The first tick rounds toward -infinity: -3 with P = 5 is preceded by -5; a jump over several
# multiples emits only the largest one reached.
items = o.source(rows(-3, 40), "t", 5)
check("source: floor and jumps", shape(items, ["t"]),
      [("tick", -5), (-3,), ("tick", 40), (40,), ("tick", INF)])
check("source: empty input", o.source([], "t", 5), [("tick", INF)])

# --- tumbling, lateness 0 --------------------------------------------------------------------
# SIZE 10, P 5, no key. Times 2, 7, 10, 4, 31, 12, 33. Source items:
#   tick 0, 2, tick 5, 7, tick 10, 10, 4, tick 30, 31, 12, 33, tick inf.
# tick 0, tick 5: nothing closes (0 + 10 > 5). tick 10: [0,10) closes (10 <= 10): (0,10,n=2).
# 10 lies exactly on that window's end: it belongs to [10,20). 4: its window [0,10) is closed:
# late. tick 30: [10,20) emits (n=1); [20,30) never had a tuple: nothing. 12: [10,20) closed:
# late. 31, 33: [30,40), emitted by the final tick. Ticks pass as T - 0.
late = {}
items = o.source(rows(2, 7, 10, 4, 31, 12, 33), "t", 5)
out = o.window_agg(items, "w", o.tumbling_windows(10), "t", [], 0, count_make([]), late)
check("tumbling: end exactly, empty window, late", shape(out, ["ws", "we", "n"]),
      [("tick", 0), ("tick", 5), (0, 10, 2), ("tick", 10), (10, 20, 1), ("tick", 30),
       (30, 40, 2), ("tick", INF)])
check("tumbling: late count", late, {"w": 2})

# --- tumbling, lateness 5 --------------------------------------------------------------------
# The same items. tick 10: [0,10) waits until 10 + 5; passes tick 5. 4 is added to [0,10)
# (not closed: 15 > 10): n = 3. tick 30: [0,10) (15 <= 30) and [10,20) (25 <= 30) emit, in
# window-end order; passes 25. 12: [10,20) is closed (25 <= 30): late. Final: (30,40,2).
late = {}
out = o.window_agg(items, "w", o.tumbling_windows(10), "t", [], 5, count_make([]), late)
check("tumbling lateness: late but allowed, ticks T - lateness", shape(out, ["ws", "we", "n"]),
      [("tick", -5), ("tick", 0), ("tick", 5), (0, 10, 3), (10, 20, 1), ("tick", 25),
       (30, 40, 2), ("tick", INF)])
check("tumbling lateness: late count", late, {"w": 1})

# --- hopping, keyed --------------------------------------------------------------------------
# SIZE 10 SLIDE 5, P 5, key k. (1,3) (2,6) (1,12) (1,7).
# Windows: 3 -> [-5,5) [0,10); 6 -> [0,10) [5,15); 12 -> [5,15) [10,20); 7 -> [0,10) [5,15).
# Items: tick 0, (1,3), tick 5, (2,6), tick 10, (1,12), (1,7), tick inf.
# tick 5 closes [-5,5) of key 1. tick 10 closes [0,10) of keys 1 and 2 (key order). (1,7): its
# window [0,10) is closed, [5,15) is not: added there only, not late. The final tick: end 15
# (keys 1, 2), then end 20.
late = {}
items = o.source(rows((1, 3), (2, 6), (1, 12), (1, 7)), "t", 5)
out = o.window_agg(items, "h", o.hopping_windows(10, 5), "t", ["k"], 0, count_make(["k"]), late)
check("hopping: partial adds, emission order", shape(out, ["k", "ws", "we", "n"]),
      [("tick", 0), (1, -5, 5, 1), ("tick", 5), (1, 0, 10, 1), (2, 0, 10, 1), ("tick", 10),
       (1, 5, 15, 2), (2, 5, 15, 1), (1, 10, 20, 1), ("tick", INF)])
check("hopping: late count", late, {"h": 0})

# --- stacked windows -------------------------------------------------------------------------
# First: hopping SIZE 4 SLIDE 2, lateness 1, key k, P 1, output (k, ws, we, n), its event time
# we. Input (1,0) (2,1) (1,3) (1,5) (2,12): items
#   tick 0, (1,0), tick 1, (2,1), tick 3, (1,3), tick 5, (1,5), tick 12, (2,12), tick inf.
# Windows: 0, 1 -> [-2,2) [0,4); 3 -> [0,4) [2,6); 5 -> [2,6) [4,8); 12 -> [10,14) [12,16).
# tick 0 -> passes -1; tick 1 -> passes 0; tick 3: [-2,2) of 1 and 2 (2 + 1 <= 3), passes 2;
# tick 5: [0,4) of 1 (n 2) and 2, passes 4; tick 12: [2,6) and [4,8) of 1, passes 11; the final
# tick: [10,14) and [12,16) of 2.
# Second: tumbling SIZE 2 keyed on we, lateness 0, output (we, arg_max(k, n), max(n), count()).
# we = 2: [2,4), emitted at the first tick >= 4, the 4 passed on after tick 5: ties of n = 1,
# the earliest (k = 1) wins. we = 4 ([4,6)), 6 and 8 at 11; 14 and 16 at the end. Nothing late.
late = {}
items = o.source(rows((1, 0), (2, 1), (1, 3), (1, 5), (2, 12)), "t", 1)
first = o.window_agg(items, "a", o.hopping_windows(4, 2), "t", ["k"], 1, count_make(["k"]), late)
check("stacked: first level", shape(first, ["k", "ws", "we", "n"]),
      [("tick", -1), ("tick", 0), (1, -2, 2, 1), (2, -2, 2, 1), ("tick", 2), (1, 0, 4, 2),
       (2, 0, 4, 1), ("tick", 4), (1, 2, 6, 2), (1, 4, 8, 1), ("tick", 11), (2, 10, 14, 1),
       (2, 12, 16, 1), ("tick", INF)])


def top(f, tuples, ws, we):
    return {"we": f["we"], "k": o.arg_max(tuples, "k", "n"), "n": max(t["n"] for t in tuples),
            "c": len(tuples)}


second = o.window_agg(first, "b", o.tumbling_windows(2), "we", ["we"], 0, top, late)
check("stacked: second level", shape(second, ["we", "k", "n", "c"]),
      [("tick", -1), ("tick", 0), ("tick", 2), (2, 1, 1, 2), ("tick", 4), (4, 1, 2, 2),
       (6, 1, 2, 1), (8, 1, 1, 1), ("tick", 11), (14, 2, 1, 1), (16, 2, 1, 1), ("tick", INF)])
check("stacked: nothing late", late, {"a": 0, "b": 0})


# --- sessions --------------------------------------------------------------------------------
def session_make(f, tuples, ws, we):
    return {"k": f["k"], "ws": ws, "we": we, "n": len(tuples), "first": tuples[0]["t"],
            "last": tuples[-1]["t"]}


# GAP 10, lateness 10, P 5, key k. Items:
#   tick 0, (1,0), tick 5, (1,5), tick 20, (1,22), (1,14), tick 40, (2,41), (1,28), (3,15),
#   tick 55, (2,56), (1,36), tick inf.
# (1,0) (1,5): session A [0,5]. (1,22): 22 - 5 >= 10: session B [22,22]. (1,14): 14 - 5 < 10 and
# 22 - 14 < 10: bridges A and B (neither closed: A's 5 + 10 + 10 = 25 > 20), merged [0,22].
# tick 40: [0,22] waits until 22 + 20 = 42. (2,41): a session of key 2. (1,28): late without
# lateness (28 + 10 <= 40) but 28 + 20 > 40: it extends [0,22] to [0,28]. (3,15): 15 + 20 <= 40:
# late. tick 55: [0,28] (48 <= 55) emits (start 0, end 38, 5 bids, first 0, last 28 by arrival);
# key 2's [41,41] waits until 61; passes tick 45. (2,56): 56 - 41 >= 10: a new session of key 2.
# (1,36): not late (56 > 55) and less than 10 after 28, but that session was emitted: a new one.
# The final tick, by window end: (1: 36..46), (2: 41..51), (2: 56..66).
late = {}
items = o.source(rows((1, 0), (1, 5), (1, 22), (1, 14), (2, 41), (1, 28), (3, 15), (2, 56),
                      (1, 36)), "t", 5)
check("session: source items", shape(items, ["k", "t"]),
      [("tick", 0), (1, 0), ("tick", 5), (1, 5), ("tick", 20), (1, 22), (1, 14), ("tick", 40),
       (2, 41), (1, 28), (3, 15), ("tick", 55), (2, 56), (1, 36), ("tick", INF)])
out = o.session_agg(items, "s", 10, "t", ["k"], 10, session_make, late)
check("session: bridge, late but allowed, late, after an emitted one",
      shape(out, ["k", "ws", "we", "n", "first", "last"]),
      [("tick", -10), ("tick", -5), ("tick", 10), ("tick", 30), (1, 0, 38, 5, 0, 28),
       ("tick", 45), (1, 36, 46, 1, 36, 36), (2, 41, 51, 1, 41, 41), (2, 56, 66, 1, 56, 56),
       ("tick", INF)])
check("session: late count", late, {"s": 1})

# A bridge whose later session (in time) arrived first: (1,30) then (1,10) then (1,20), GAP 15,
# lateness 100, P 100 (one tick, 0, then the final one). 10 is 20 before 30: two sessions, [30]
# (first arrival 0) and [10] (arrival 1). 20 bridges them: [30] is combined with [10], then 20
# added: first(t) = 30, last(t) = 20; start 10, end 30 + 15. A tie of arg_max goes to the
# earliest arrival: arg_max(t, v) over v = 1, 1, 1 is 30.
late = {}
items = o.source([{"k": 1, "t": 30, "v": 1}, {"k": 1, "t": 10, "v": 1}, {"k": 1, "t": 20, "v": 1}],
                 "t", 100)


def bridge_make(f, tuples, ws, we):
    d = session_make(f, tuples, ws, we)
    d["top"] = o.arg_max(tuples, "t", "v")
    return d


out = o.session_agg(items, "s", 15, "t", ["k"], 100, bridge_make, late)
check("session: merge order by first arrival", shape(out, ["ws", "we", "n", "first", "last", "top"]),
      [("tick", -100), (10, 45, 3, 30, 20, 30), ("tick", INF)])

# Sessions and a session time exactly GAP apart: 0 and 10 with GAP 10 are not less than GAP
# apart: two sessions, emitted at the final tick by window end (10, then 20).
late = {}
items = o.source(rows((1, 0), (1, 10)), "t", 100)
out = o.session_agg(items, "s", 10, "t", ["k"], 0, session_make, late)
check("session: exactly GAP apart", shape(out, ["ws", "we", "n"]),
      [("tick", 0), (0, 10, 1), (10, 20, 1), ("tick", INF)])

# --- the time-ordered fan-in -----------------------------------------------------------------
# A: times 1, 4, 12 with P 5: tick 0, 1, 4, tick 10, 12, tick inf.
# B: times 0, 6, 3, 10, 20 with P 3: tick 0, 0, tick 6, 6, 3, tick 9, 10, tick 18, 20, tick inf.
# Heads (A | B) and what is taken:
#   tick 0 | tick 0: equal keys, A first: A's latest 0, B has none: no tick.
#   1 | tick 0: B's tick 0: the smallest latest is 0: tick 0.   1 | 0: tuple 0 (B).
#   1 | tick 6: 1 (A).   4 | tick 6: 4 (A).   tick 10 | tick 6: B's latest 6, min(0, 6) = 0.
#   tick 10 | 6: 6 (B).   tick 10 | 3: 3 (B): an input going back in time is not reordered.
#   tick 10 | tick 9: B's latest 9, min(0, 9) = 0.
#   tick 10 | 10: equal keys, the tick first: A's latest 10, min(10, 9) = 9: tick 9.
#   12 | 10: 10 (B).   12 | tick 18: 12 (A).   tick inf | tick 18: min(10, 18): tick 10.
#   tick inf | 20: 20 (B).   tick inf | tick inf: A's: min(inf, 18): tick 18. Then B's: tick inf.
a = o.with_time(o.source([{"s": "A", "t": t} for t in (1, 4, 12)], "t", 5), "t")
b = o.with_time(o.source([{"s": "B", "t": t} for t in (0, 6, 3, 10, 20)], "t", 3), "t")
check("time-ordered fan-in", shape(o.time_merge([a, b]), ["s", "t"]),
      [("tick", 0), ("B", 0), ("A", 1), ("A", 4), ("B", 6), ("B", 3), ("tick", 9), ("B", 10),
       ("A", 12), ("tick", 10), ("B", 20), ("tick", 18), ("tick", INF)])
# An input whose head is its final tick has not ended: its latest tick still bounds the merge's
# (FORMAT: the smallest key is taken, and +inf is the largest). A: 5 (P 5): tick 5, 5, tick inf.
# B: 2, 30 (P 10): tick 0, 2, tick 30, 30, tick inf.
#   tick 5 | tick 0: B's: A has none yet: nothing.   tick 5 | 2: 2 (B).
#   tick 5 | tick 30: A's: min(5, 0): tick 0.   5 | tick 30: 5 (A).
#   tick inf | tick 30: B's: min(5, 30): tick 5 (A, at its final tick, still counts).
#   tick inf | 30: 30 (B).   tick inf | tick inf: A's first: min(inf, 30): tick 30.
#   A's end | tick inf: B's tick: tick inf.
a = o.with_time(o.source([{"s": "A", "t": 5}], "t", 5), "t")
b = o.with_time(o.source([{"s": "B", "t": t} for t in (2, 30)], "t", 10), "t")
check("time-ordered fan-in: an input at its final tick holds the tick",
      shape(o.time_merge([a, b]), ["s", "t"]),
      [("B", 2), ("tick", 0), ("A", 5), ("tick", 5), ("B", 30), ("tick", 30), ("tick", INF)])

# --- running ---------------------------------------------------------------------------------
# Key d; after each tuple: count, distinct b, sum p, max p of its key so far. Ticks unchanged.
items = o.source([{"d": 0, "b": 1, "p": 10, "t": 0}, {"d": 0, "b": 2, "p": 30, "t": 1},
                  {"d": 1, "b": 1, "p": 5, "t": 2}, {"d": 0, "b": 1, "p": 20, "t": 3}], "t", 2)


def run_make(state, f, tup):
    state["n"] = state.get("n", 0) + 1
    state.setdefault("bs", set()).add(tup["b"])
    state["s"] = state.get("s", 0) + tup["p"]
    state["m"] = max(state.get("m", tup["p"]), tup["p"])
    return {"d": f["d"], "n": state["n"], "nb": len(state["bs"]), "s": state["s"], "m": state["m"]}


out = o.running_agg(items, ["d"], run_make)
check("running", shape(out, ["d", "n", "nb", "s", "m"]),
      [("tick", 0), (0, 1, 1, 10, 10), (0, 2, 2, 40, 30), ("tick", 2), (1, 1, 1, 5, 5),
       (0, 3, 2, 60, 30), ("tick", INF)])

# --- a Filter passes the tick of a tuple it drops; the sink writes tuples only ---------------
items = o.filter_items(o.source(rows(1, 12), "t", 10), lambda t: t["t"] != 12)
check("filter keeps ticks", shape(items, ["t"]), [("tick", 0), (1,), ("tick", 10), ("tick", INF)])
check("sink", o.sink_csv([("tick", 0), ("tuple", {"a": 1, "s": 'x, "y"'}, 0), ("tick", INF)],
                         ["a", "s"]), 'a,s\n1,"x, ""y"""\n')

# --- the shortcuts of the oracle against their definitions, on random small inputs -----------
# hopping_windows: every [k*SLIDE, k*SLIDE + SIZE) holding t, found by trying every k near t.
r = __import__("random").Random(20)
bad = 0
for _ in range(2000):
    slide = r.randint(1, 5)
    size = slide * r.randint(1, 4)
    t = r.randint(-30, 30)
    want = [(k * slide, k * slide + size) for k in range(-40, 41) if k * slide <= t < k * slide + size]
    bad += o.hopping_windows(size, slide)(t) != want
check("hopping windows of a time: by definition", bad, 0)


# session_agg's lo - GAP < t < hi + GAP against "less than GAP from one of its tuples", with a
# session kept as its members only.
def sessions_by_definition(items, gap, lateness):
    out, open_s, current, late, pos = [], [], None, 0, 0
    for it in items:
        if it[0] == "tick":
            current = it[1]
            ready = [s for s in open_s if max(m[1]["t"] for m in s) + gap + lateness <= current]
            ready.sort(key=lambda s: (max(m[1]["t"] for m in s) + gap, min(m[1]["t"] for m in s),
                                      s[0][1]["k"]))
            for s in ready:
                open_s.remove(s)
                out.append((s[0][1]["k"], min(m[1]["t"] for m in s), max(m[1]["t"] for m in s) + gap,
                            tuple(m[1]["t"] for m in s)))
            continue
        tup = it[1]
        if current is not None and tup["t"] + gap + lateness <= current:
            late += 1
            continue
        near = [s for s in open_s if s[0][1]["k"] == tup["k"] and
                any(abs(m[1]["t"] - tup["t"]) < gap for m in s)]
        merged = sorted([m for s in near for m in s], key=lambda m: m[0]) + [(pos, tup)]
        for s in near:
            open_s.remove(s)
        open_s.append(merged)
        pos += 1
    return out, late


bad = 0
for _ in range(300):
    gap, lateness, period = r.randint(1, 6), r.randint(0, 6), r.randint(1, 6)
    ts, clock = [], 0
    for _ in range(r.randint(0, 25)):
        clock += r.randint(0, 4)
        ts.append((r.randint(1, 3), max(0, clock - (r.randint(0, 12) if r.random() < 0.3 else 0))))
    items = o.source(rows(*ts), "t", period)
    late = {}
    got = o.session_agg(items, "s", gap, "t", ["k"], lateness,
                        lambda f, tu, ws, we: {"k": f["k"], "ws": ws, "we": we,
                                               "ts": tuple(x["t"] for x in tu)}, late)
    got = [(x[1]["k"], x[1]["ws"], x[1]["we"], x[1]["ts"]) for x in got if x[0] == "tuple"]
    bad += (got, late["s"]) != sessions_by_definition(items, gap, lateness)
check("sessions: by definition, random inputs", bad, 0)

print("oracle_selftest: %d failed" % failed)
sys.exit(1 if failed else 0)
