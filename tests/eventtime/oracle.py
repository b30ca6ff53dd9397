#!/usr/bin/env python3
"""oracle.py: the expected output of the event-time queries, computed independently of sf.

    python3 oracle.py QUERY INPUT.csv OUTPUT.csv [--input2 CSV] [--late FILE] [--graph GRAPH.xml]

QUERY is one of the graphs of this directory (hot_items, highest_bid, highest_keyed, sessions,
bidder_windows, daily, merged_sites: which reads a second input, --input2) or the example graphs/bidders.xml (bidders). The oracle reads INPUT.csv (the bids gen.py writes), pushes it through the query's
operators as a list of items in stream order, and writes what the query's FileSink would write to
OUTPUT.csv. --late FILE writes the number of late tuples of every time-window Aggregate as JSON
({"operator": count}), which the test compares with sf-exec --stats-json. --graph checks that the
graph's parameters (windows, lateness, keys, ticks) are the ones the oracle assumes, so that a
change to one of them cannot go unnoticed.

The rules are the language's, section "Event time" of docs/language.md, read literally:
- a stream is a list of items: ("tuple", values, position) and ("tick", T); the end of the list is
  the final punctuation, preceded by the final tick +inf;
- a source's clock is the largest time so far; a tuple that takes it to or past a multiple of the
  tick period P not reached before is preceded by the tick floor(clock / P) * P (so the first
  tuple is preceded by one);
- a time-window Aggregate closes a window once end + lateness <= the current tick, emits the
  windows a tick closes sorted by (window end, window start, key), then passes the tick on as
  T - lateness; a tuple added to none of its windows (all closed) is late: counted and dropped;
- a session holds a key's tuples whose times are less than GAP apart, its start is its smallest
  time and its end its largest time + GAP; a tuple within GAP of two open sessions merges them;
  a tuple never joins an emitted session;
- a time-ordered fan-in takes, of the items at its inputs' heads, the one with the smallest time,
  a tick before a tuple and the earlier input on ties, and ticks the smallest latest tick;
- `running` emits one tuple per input over everything its key received so far;
- aggregate functions see a window's tuples in arrival order (stream position); `first`, `last`
  and the ties of arg_max/arg_min go by that order; a key's values come from its first tuple.

Everything here is written to be obviously right rather than fast: windows keep their tuples and
the aggregates are computed from the list when the window is emitted.
"""
import argparse
import csv
import json
import sys
import xml.etree.ElementTree as ET

INF = float("inf")  # the final tick


# ---------------------------------------------------------------------------------------------
# Items and the operators that are not windows
# ---------------------------------------------------------------------------------------------

def source(rows, time_attr, period):
    """The items of a source: its rows as tuples, each preceded by the tick it raises."""
    items = []
    clock = None  # -infinity: no tuple yet
    for pos, row in enumerate(rows):
        t = row[time_attr]
        new_clock = t if clock is None else max(clock, t)
        # Python's // rounds toward -infinity, as the tick's floor does.
        if clock is None or new_clock // period > clock // period:
            items.append(("tick", (new_clock // period) * period))
        clock = new_clock
        items.append(("tuple", row, pos))
    items.append(("tick", INF))
    return items


def filter_items(items, predicate):
    """A Filter: drops the tuples the predicate refuses, passes every tick."""
    return [it for it in items if it[0] == "tick" or predicate(it[1])]


def functor(items, fn):
    """A stateless Functor: each tuple mapped to one, ticks passed on."""
    return [it if it[0] == "tick" else ("tuple", fn(it[1]), it[2]) for it in items]


def time_merge(inputs):
    """A time-ordered fan-in (input order="time") of complete item lists, the first written first.

    While an input has not ended, its head is an item: a tuple (keyed by its time), a tick (by
    its value) or its end (after its final tick; keyed +inf, after ticks). The merge takes the
    head with the smallest key, on equal keys a tick before a tuple, then the earlier input. Its
    own ticks are the smallest of the latest ticks of the inputs that have not ended, emitted
    when that rises; tuples are passed on as they are taken."""
    n = len(inputs)
    heads = [0] * n
    latest = [None] * n  # the latest tick taken from each input; None: none yet (-infinity)
    ended = [False] * n
    emitted = None  # the merge's latest tick
    out = []

    def merged_tick():
        live = [latest[i] for i in range(n) if not ended[i]]
        if not live or any(v is None for v in live):
            return None
        return min(live)

    while not all(ended):
        best = None
        for i in range(n):
            if ended[i]:
                continue
            if heads[i] == len(inputs[i]):
                key = (INF, 2)  # its end
            else:
                it = inputs[i][heads[i]]
                key = (it[1], 0) if it[0] == "tick" else (it[1]["__time__"], 1)
            if best is None or key < best[0]:  # strictly: the earlier input wins ties
                best = (key, i)
        i = best[1]
        if heads[i] == len(inputs[i]):
            ended[i] = True
        else:
            it = inputs[i][heads[i]]
            heads[i] += 1
            if it[0] == "tick":
                latest[i] = it[1]
            else:
                out.append(it)
                continue
        m = merged_tick()
        if m is not None and (emitted is None or m > emitted):
            emitted = m
            out.append(("tick", m))
    return out


def with_time(items, time_attr):
    """Items whose tuples carry their event time as __time__, for time_merge (which does not know
    each input's time attribute)."""
    return [it if it[0] == "tick" else ("tuple", dict(it[1], __time__=it[1][time_attr]), it[2])
            for it in items]


def key_order(values):
    """The order of keys of FORMAT's "Event time": ints numerically, strings by bytes, false
    before true (the queries here only use ints)."""
    out = []
    for v in values:
        if isinstance(v, bool):
            out.append((0, int(v)))
        elif isinstance(v, int):
            out.append((1, v))
        elif isinstance(v, str):
            out.append((2, v.encode("utf-8")))
        else:
            raise TypeError("key of type %s not supported by the oracle" % type(v).__name__)
    return tuple(out)


def minus(t, lateness):
    return INF if t == INF else t - lateness


# ---------------------------------------------------------------------------------------------
# Time windows
# ---------------------------------------------------------------------------------------------

def tumbling_windows(size):
    def windows_of(t):
        start = (t // size) * size  # rounding toward -infinity
        return [(start, start + size)]
    return windows_of


def hopping_windows(size, slide):
    assert size % slide == 0, "SLIDE divides SIZE"

    def windows_of(t):
        # every k with k*slide <= t < k*slide + size: size/slide windows
        result = []
        k = t // slide
        while k * slide + size > t:
            result.append((k * slide, k * slide + size))
            k -= 1
        result.reverse()
        assert len(result) == size // slide
        return result
    return windows_of


def window_agg(items, name, windows_of, time_attr, keys, lateness, make, late):
    """A tumbling or hopping time-window Aggregate.

    make(first_tuple, tuples, start, end) gives an output tuple (a dict in the output schema's
    order) from the window's tuples in arrival order. late[name] receives the count of late
    tuples."""
    out = []
    open_windows = {}  # (start, end, key values) -> [tuples in arrival order]
    current = None  # the current tick; None: none received yet (-infinity)
    late_count = 0
    for it in items:
        if it[0] == "tick":
            T = it[1]
            current = T
            ready = [w for w in open_windows if w[1] + lateness <= T]
            ready.sort(key=lambda w: (w[1], w[0], key_order(w[2])))
            for w in ready:
                tuples = open_windows.pop(w)
                out.append(("tuple", make(tuples[0], tuples, w[0], w[1]), None))
            out.append(("tick", minus(T, lateness)))
            continue
        tup = it[1]
        kv = tuple(tup[k] for k in keys)
        added = False
        for (start, end) in windows_of(tup[time_attr]):
            if current is not None and end + lateness <= current:
                continue  # closed: emitted already, or never had a tuple and never will
            open_windows.setdefault((start, end, kv), []).append(tup)
            added = True
        if not added:
            late_count += 1
    assert not open_windows, "the final tick emits every window"
    late[name] = late_count
    return out


def session_agg(items, name, gap, time_attr, keys, lateness, make, late):
    """A session time-window Aggregate (see window_agg for make and late)."""
    out = []
    sessions = {}  # key values -> [open sessions], a session: dict(lo, hi, members, first)
    current = None
    late_count = 0
    arrival = 0  # stream position of the tuples at this operator
    for it in items:
        if it[0] == "tick":
            T = it[1]
            current = T
            ready = []
            for kv, lst in sessions.items():
                for s in lst:
                    if s["hi"] + gap + lateness <= T:
                        ready.append((kv, s))
            ready.sort(key=lambda e: (e[1]["hi"] + gap, e[1]["lo"], key_order(e[0])))
            for kv, s in ready:
                sessions[kv].remove(s)
                tuples = [tup for (_, tup) in s["members"]]
                out.append(("tuple", make(tuples[0], tuples, s["lo"], s["hi"] + gap), None))
            sessions = {kv: lst for kv, lst in sessions.items() if lst}
            out.append(("tick", minus(T, lateness)))
            continue
        tup = it[1]
        pos = arrival
        arrival += 1
        t = tup[time_attr]
        if current is not None and t + gap + lateness <= current:
            late_count += 1
            continue
        kv = tuple(tup[k] for k in keys)
        lst = sessions.setdefault(kv, [])
        # A session's tuples are a chain with steps < gap, so t is less than gap from one of them
        # exactly when lo - gap < t < hi + gap.
        touching = [s for s in lst if s["lo"] - gap < t < s["hi"] + gap]
        assert len(touching) <= 2, "open sessions of a key are >= gap apart"
        if len(touching) == 2:
            # the session whose first tuple arrived earlier is combined with the other; keeping
            # the members sorted by stream position makes first, last and ties follow it
            a, b = sorted(touching, key=lambda s: s["first"])
            lst.remove(b)
            a["members"] = sorted(a["members"] + b["members"], key=lambda m: m[0])
            a["lo"] = min(a["lo"], b["lo"])
            a["hi"] = max(a["hi"], b["hi"])
            touching = [a]
        if touching:
            s = touching[0]
            s["members"].append((pos, tup))
            s["lo"] = min(s["lo"], t)
            s["hi"] = max(s["hi"], t)
        else:
            lst.append({"lo": t, "hi": t, "members": [(pos, tup)], "first": pos})
    assert not sessions, "the final tick emits every session"
    late[name] = late_count
    return out


def running_agg(items, keys, make):
    """A `running` Aggregate: after every tuple, one output over all of its key's tuples so far.
    make(state, first_tuple, tup) updates state (a dict, empty for a new key) with tup and
    returns the output; ticks pass unchanged (running is not time-based)."""
    out = []
    states = {}  # key values -> (first tuple, state)
    for it in items:
        if it[0] == "tick":
            out.append(it)
            continue
        tup = it[1]
        kv = tuple(tup[k] for k in keys)
        if kv not in states:
            states[kv] = (tup, {})
        first, state = states[kv]
        out.append(("tuple", make(state, first, tup), it[2]))
    return out


# ---------------------------------------------------------------------------------------------
# Aggregate functions over a window's tuples (arrival order)
# ---------------------------------------------------------------------------------------------

def arg_max(tuples, e, by):
    best = None
    for tup in tuples:
        if best is None or tup[by] > best[by]:  # strictly larger: the earliest wins ties
            best = tup
    return best[e]


def arg_min(tuples, e, by):
    best = None
    for tup in tuples:
        if best is None or tup[by] < best[by]:
            best = tup
    return best[e]


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------

BID_TYPES = {"auction": int, "bidder": int, "price": int, "channel": str, "ts": int}


def read_bids(path):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        if sorted(header) != sorted(BID_TYPES):
            raise SystemExit("oracle: %s: header %s is not %s" % (path, header, list(BID_TYPES)))
        rows = []
        for rec in reader:
            if not rec:
                continue  # a blank line, skipped as by FileSource
            rows.append({h: BID_TYPES[h](v) for h, v in zip(header, rec)})
        return rows


def csv_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        if any(c in v for c in ',"\r\n'):
            return '"' + v.replace('"', '""') + '"'
        return v
    raise TypeError("the queries write ints and strings only, not %s" % type(v).__name__)


def sink_csv(items, attrs):
    """What a FileSink writes: the header, then one row per tuple (ticks write nothing)."""
    lines = [",".join(attrs)]
    for it in items:
        if it[0] == "tuple":
            row = ",".join(csv_text(it[1][a]) for a in attrs)
            lines.append('""' if row == "" else row)  # one empty string: not a blank line
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The queries: each the graph tests/eventtime/QUERY.xml, operator by operator
# ---------------------------------------------------------------------------------------------

# What each graph must say (checked with --graph): operator -> {param: text}.
PARAMS = {
    "hot_items": {
        "bids": {"time": "ts", "tick": "1000"},
        "counts": {"partitionBy": "auction", "window": "hopping time 10000 2000", "lateness": "1000"},
        "hottest": {"partitionBy": "wend", "window": "tumbling time 2000", "lateness": None},
    },
    "highest_bid": {
        "bids": {"time": "ts", "tick": "5000"},
        "highest": {"partitionBy": None, "window": "tumbling time 5000", "lateness": None},
    },
    "highest_keyed": {
        "bids": {"time": "ts", "tick": "5000"},
        "perAuction": {"partitionBy": "auction", "window": "tumbling time 5000", "lateness": None},
        "highest": {"partitionBy": "wend", "window": "tumbling time 5000", "lateness": None},
    },
    "sessions": {
        "bids": {"time": "ts", "tick": "700"},
        "sessions": {"partitionBy": "bidder", "window": "session time 3000", "lateness": "2000"},
    },
    "bidder_windows": {
        "bids": {"time": "ts", "tick": "3000"},
        "people": {"where": 'channel != "bot"'},
        "perBidder": {"partitionBy": "bidder", "window": "tumbling time 5000", "lateness": "2000"},
    },
    "bidders": {
        "bids": {"time": "ts", "tick": "1000", "file": "data/bids.csv"},
        "people": {"where": 'channel != "bot"'},
        "perBidder": {"partitionBy": "bidder", "window": "tumbling time 10000", "lateness": "2000"},
    },
    "merged_sites": {
        "siteA": {"time": "ts", "tick": "1000", "file": "data/bids.csv"},
        "siteB": {"time": "ts", "tick": "1500", "file": "data/bids2.csv"},
        "people": {"where": 'channel != "bot"', "@input": ("BidsA BidsB", "time")},
        "perAuction": {"partitionBy": "auction", "window": "tumbling time 5000", "lateness": "1000"},
    },
    "daily": {
        "bids": {"time": "ts", "tick": "3600000"},
        "dayOf": {},
        "perDay": {"partitionBy": "day", "window": "running", "lateness": None},
    },
}


def q_hot_items(rows, late):
    """NEXMark's hot items: bids per auction in hopping windows of 10 s every 2 s, then per
    window (stacked on its end) the auction with the most bids."""
    items = source(rows, "ts", 1000)

    def count(first, tuples, ws, we):
        return {"auction": first["auction"], "wstart": ws, "wend": we, "bids": len(tuples)}
    items = window_agg(items, "counts", hopping_windows(10000, 2000), "ts", ["auction"], 1000,
                       count, late)

    def hottest(first, tuples, ws, we):
        return {"wend": first["wend"], "auction": arg_max(tuples, "auction", "bids"),
                "bids": max(t["bids"] for t in tuples), "auctions": len(tuples)}
    items = window_agg(items, "hottest", tumbling_windows(2000), "wend", ["wend"], 0, hottest,
                       late)
    return sink_csv(items, ["wend", "auction", "bids", "auctions"])


def q_highest_bid(rows, late):
    """The highest bid of every 5 s (NEXMark's q7 without the join): one window for all bids."""
    items = source(rows, "ts", 5000)

    def highest(first, tuples, ws, we):
        return {"wstart": ws, "wend": we, "auction": arg_max(tuples, "auction", "price"),
                "bidder": arg_max(tuples, "bidder", "price"),
                "price": max(t["price"] for t in tuples),
                "cheapest": arg_min(tuples, "auction", "price"), "bids": len(tuples)}
    items = window_agg(items, "highest", tumbling_windows(5000), "ts", [], 0, highest, late)
    return sink_csv(items, ["wstart", "wend", "auction", "bidder", "price", "cheapest", "bids"])


def q_highest_keyed(rows, late):
    """The highest bid of every 5 s in two keyed stages: per auction per window, then per window
    (stacked on its end). Ties go to the auction emitted first, the smallest."""
    items = source(rows, "ts", 5000)

    def per_auction(first, tuples, ws, we):
        return {"auction": first["auction"], "price": max(t["price"] for t in tuples),
                "bidder": arg_max(tuples, "bidder", "price"), "bids": len(tuples), "wend": we}
    items = window_agg(items, "perAuction", tumbling_windows(5000), "ts", ["auction"], 0,
                       per_auction, late)

    def highest(first, tuples, ws, we):
        return {"wend": first["wend"], "auction": arg_max(tuples, "auction", "price"),
                "bidder": arg_max(tuples, "bidder", "price"),
                "price": max(t["price"] for t in tuples), "auctions": len(tuples),
                "bids": sum(t["bids"] for t in tuples)}
    items = window_agg(items, "highest", tumbling_windows(5000), "wend", ["wend"], 0, highest,
                       late)
    return sink_csv(items, ["wend", "auction", "bidder", "price", "auctions", "bids"])


def q_sessions(rows, late):
    """Bidder sessions: a bidder's bids less than 3 s apart, waiting 2 s for stragglers."""
    items = source(rows, "ts", 700)

    def session(first, tuples, ws, we):
        return {"bidder": first["bidder"], "wstart": ws, "wend": we, "bids": len(tuples),
                "total": sum(t["price"] for t in tuples), "top": max(t["price"] for t in tuples),
                "firstAuction": tuples[0]["auction"], "lastAuction": tuples[-1]["auction"]}
    items = session_agg(items, "sessions", 3000, "ts", ["bidder"], 2000, session, late)
    return sink_csv(items, ["bidder", "wstart", "wend", "bids", "total", "top", "firstAuction",
                            "lastAuction"])


def q_bidder_windows(rows, late):
    """Bids per bidder every 5 s, bots left out, windows waiting 2 s for stragglers."""
    items = source(rows, "ts", 3000)
    items = filter_items(items, lambda t: t["channel"] != "bot")

    def per_bidder(first, tuples, ws, we):
        return {"bidder": first["bidder"], "wstart": ws, "wend": we, "bids": len(tuples),
                "spent": sum(t["price"] for t in tuples),
                "auctions": len(set(t["auction"] for t in tuples))}
    items = window_agg(items, "perBidder", tumbling_windows(5000), "ts", ["bidder"], 2000,
                       per_bidder, late)
    return sink_csv(items, ["bidder", "wstart", "wend", "bids", "spent", "auctions"])


def q_bidders(rows, late):
    """The example graphs/bidders.xml: bids per bidder every 10 s, bots left out, windows waiting
    2 s for stragglers, with the top price and its auction."""
    items = source(rows, "ts", 1000)
    items = filter_items(items, lambda t: t["channel"] != "bot")

    def per_bidder(first, tuples, ws, we):
        return {"bidder": first["bidder"], "wstart": ws, "wend": we, "bids": len(tuples),
                "spent": sum(t["price"] for t in tuples),
                "auctions": len(set(t["auction"] for t in tuples)),
                "top": max(t["price"] for t in tuples),
                "topAuction": arg_max(tuples, "auction", "price")}
    items = window_agg(items, "perBidder", tumbling_windows(10000), "ts", ["bidder"], 2000,
                       per_bidder, late)
    return sink_csv(items, ["bidder", "wstart", "wend", "bids", "spent", "auctions", "top",
                            "topAuction"])


def q_merged_sites(rows, late, rows2):
    """Bids of two sites merged in event time (order="time"), bots left out, then per auction
    every 5 s: bids, volume, and the first and last bidder in the merged order."""
    a = with_time(source(rows, "ts", 1000), "ts")
    b = with_time(source(rows2, "ts", 1500), "ts")
    items = filter_items(time_merge([a, b]), lambda t: t["channel"] != "bot")

    def per_auction(first, tuples, ws, we):
        return {"auction": first["auction"], "wstart": ws, "wend": we, "bids": len(tuples),
                "volume": sum(t["price"] for t in tuples), "firstBidder": tuples[0]["bidder"],
                "lastBidder": tuples[-1]["bidder"]}
    items = window_agg(items, "perAuction", tumbling_windows(5000), "ts", ["auction"], 1000,
                       per_auction, late)
    return sink_csv(items, ["auction", "wstart", "wend", "bids", "volume", "firstBidder",
                            "lastBidder"])


def c_div(a, b):
    """C's integer division, truncating toward zero (ts is never negative here anyway)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def q_daily(rows, late):
    """Running statistics per day: bids, distinct bidders, volume and the top price so far."""
    items = source(rows, "ts", 3600000)
    items = functor(items, lambda t: {"day": c_div(t["ts"], 86400000), "bidder": t["bidder"],
                                      "price": t["price"], "ts": t["ts"]})

    def per_day(state, first, tup):
        state["bids"] = state.get("bids", 0) + 1
        state.setdefault("bidders", set()).add(tup["bidder"])
        state["volume"] = state.get("volume", 0) + tup["price"]
        state["top"] = max(state.get("top", tup["price"]), tup["price"])
        return {"day": first["day"], "bids": state["bids"], "bidders": len(state["bidders"]),
                "volume": state["volume"], "top": state["top"]}
    items = running_agg(items, ["day"], per_day)
    return sink_csv(items, ["day", "bids", "bidders", "volume", "top"])


QUERIES = {
    "hot_items": q_hot_items,
    "highest_bid": q_highest_bid,
    "highest_keyed": q_highest_keyed,
    "sessions": q_sessions,
    "bidder_windows": q_bidder_windows,
    "bidders": q_bidders,
    "merged_sites": q_merged_sites,
    "daily": q_daily,
}


def check_graph(query, path):
    """Errors (a list of strings) where the graph's parameters differ from the oracle's."""
    ns = {"g": "urn:streamfission:graph:1"}
    root = ET.parse(path).getroot()
    ops = {op.get("name"): op for op in root.findall("g:operator", ns)}
    errors = []
    for opname, want in PARAMS[query].items():
        op = ops.get(opname)
        if op is None:
            errors.append("%s: no operator '%s'" % (path, opname))
            continue
        have = {p.get("name"): " ".join((p.text or "").split()) for p in op.findall("g:param", ns)}
        for pname, value in want.items():
            if pname == "@input":
                inputs = [(i.get("stream"), i.get("order")) for i in op.findall("g:input", ns)]
                if inputs != [value]:
                    errors.append("%s: operator '%s': inputs %r, the oracle assumes %r"
                                  % (path, opname, inputs, [value]))
                continue
            if have.get(pname) != value:
                errors.append("%s: operator '%s': param '%s' is %r, the oracle assumes %r"
                              % (path, opname, pname, have.get(pname), value))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("query", choices=sorted(QUERIES))
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--input2", help="the second input (merged_sites: the second site's bids)")
    ap.add_argument("--late", help="write the late counts per operator (JSON) here")
    ap.add_argument("--graph", help="check the graph's parameters against the oracle's")
    a = ap.parse_args()
    if a.graph:
        errors = check_graph(a.query, a.graph)
        if errors:
            for e in errors:
                print("oracle: " + e, file=sys.stderr)
            sys.exit(2)
    late = {}
    if (a.query == "merged_sites") != (a.input2 is not None):
        ap.error("--input2 is for merged_sites, which needs it")
    extra = [read_bids(a.input2)] if a.input2 else []
    text = QUERIES[a.query](read_bids(a.input), late, *extra)
    with open(a.output, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    for name, n in late.items():
        print("oracle: %s: %s: %d late" % (a.query, name, n), file=sys.stderr)
    if a.late:
        with open(a.late, "w", encoding="utf-8") as f:
            json.dump(late, f, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
