#!/usr/bin/env python3
"""oracle.py: the expected output of the NEXMark-style queries, computed independently of sf.

    python3 oracle.py QUERY DATA_DIR OUTPUT.csv [--late FILE] [--kept FILE] [--graph GRAPH.xml]

QUERY is one of the graphs of this directory (q3 q7 q8 q10 q13 q14 q20 q21 q22). The oracle
reads the CSV files gen.py wrote in DATA_DIR, pushes them through the query's operators as lists
of items in stream order, and writes what the query's FileSink would write to OUTPUT.csv. --late
FILE writes the number of late tuples of each Join and time window as JSON ({"operator":
count}), compared with sf-exec --stats-json; --kept FILE the largest number of tuples each Join
kept at once (both sides), compared with the sequential run's kept_peak. --graph checks that the
graph's parameters (files, windows, lateness, ticks, keys, predicates) are the ones the oracle
assumes.

The rules are docs/language.md's, read literally; the event-time pieces are
tests/eventtime/oracle.py's, imported (source(): a source's tuples with the ticks they raise, the
final tick +inf; time_merge(): the time-ordered fan-in, left before right on ties, a tick before a
tuple; filter_items(), functor()). A Join, section "Join":
- its two inputs are one time-ordered fan-in, the left written first; its current tick is the
  fan-in's;
- a tuple is late when time + lateness < the current tick (tumbling: when end + lateness <= the
  current tick for its window); it is counted and dropped;
- any other is matched with the kept tuples of the other side, in their arrival order: equal
  keys, r.time - l.time in [LOWER, UPPER] (tumbling: both in one window), then `where`; each
  match is emitted in that order;
- then it is kept: a left tuple until the current tick exceeds time + UPPER + lateness, a right
  one until it exceeds time - LOWER + lateness (tumbling: until its window is closed).
- it passes each tick T on as T - lateness - max(0, UPPER, -LOWER) (tumbling: T - lateness -
  SIZE), which a time window downstream closes its windows by.
The scalar functions follow section "Functions": split_part counts fields from 1 (from the end
when negative), "" past the last; lower is ASCII only; the time functions are UTC on epoch
milliseconds; a double is written as its shortest round-trip text.
"""
import argparse
import csv
import datetime
import json
import os
import re
import sys

from gen import eventtime  # this directory's gen.py: tests/eventtime/NAME.py by path

ET = eventtime("oracle")
source, time_merge, filter_items, functor = ET.source, ET.time_merge, ET.filter_items, ET.functor

# ---------------------------------------------------------------------------------------------
# Input files
# ---------------------------------------------------------------------------------------------

TYPES = {"note": str, "value": str, "key": int, "kind": str, "id": int, "name": str, "email": str, "city": str, "state": str,
         "seller": int, "category": int, "initial": int, "expires": int, "auction": int,
         "bidder": int, "price": int, "channel": str, "url": str, "ts": int}
FILES = {"persons.csv": "id name email city state ts",
         "auctions.csv": "id seller category initial expires ts",
         "bids.csv": "auction bidder price channel url ts",
         "events.csv": "kind id name email city state seller category initial expires auction "
                       "bidder price channel url ts",
         "side.csv": "note value key"}


def read(data, name, columns=None):
    """The rows of DATA/NAME as dicts of typed values; with columns (FileSource columns="subset"),
    only those columns."""
    with open(os.path.join(data, name), newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        if header != FILES[name].split():
            raise SystemExit("oracle: %s: header %s is not gen.py's" % (name, header))
        keep = header if columns is None else columns.split()
        rows = []
        for rec in reader:
            full = dict(zip(header, rec))
            rows.append({c: TYPES[c](full[c]) for c in keep})
        return rows


# ---------------------------------------------------------------------------------------------
# The Join
# ---------------------------------------------------------------------------------------------

def sided(items, side, time_attr):
    """Items of one side of a Join: tuples tagged with their side and event time (__time__ is what
    time_merge orders by)."""
    return [it if it[0] == "tick" else ("tuple", dict(it[1], __side__=side, __time__=it[1][time_attr]), it[2])
            for it in items]


def join(items, name, on, window, lateness, where, make, late, kept_peak):
    """A Join over its merged input items (see the module's docstring). on: [(left attr, right
    attr)]; window: ("interval", LOWER, UPPER) or ("tumbling", SIZE); where(l, r) -> bool or None;
    make(l, r) -> the output tuple. Returns the output items: the matches, and each tick passed on
    (shifted, so that nothing it emitted is late downstream)."""
    tick = None  # the current tick; None: none yet (-infinity)
    kept = [[], []]  # per side: [keep-until, row] in arrival order
    out = []
    nlate = 0
    peak = 0

    def start(t):
        return (t // window[1]) * window[1]

    def key(row, side):
        return tuple(row[pair[side]] for pair in on)

    # the tick passed on: T - lateness - max(0, UPPER, -LOWER) (tumbling: T - lateness - SIZE)
    shift = lateness + (max(0, window[2], -window[1]) if window[0] == "interval" else window[1])
    for it in items:
        if it[0] == "tick":
            tick = it[1]
            for s in (0, 1):
                kept[s] = [x for x in kept[s] if not tick > x[0]]
            out.append(("tick", ET.minus(tick, shift)))
            continue
        row = it[1]
        side = row["__side__"]
        t = row["__time__"]
        if window[0] == "interval":
            is_late = tick is not None and t + lateness < tick
        else:
            is_late = tick is not None and start(t) + window[1] + lateness <= tick
        if is_late:
            nlate += 1
            continue
        k = key(row, side)
        for x in kept[1 - side]:
            other = x[1]
            if key(other, 1 - side) != k:
                continue
            left, right = (row, other) if side == 0 else (other, row)
            if window[0] == "interval":
                ok = window[1] <= right["__time__"] - left["__time__"] <= window[2]
            else:
                ok = start(left["__time__"]) == start(right["__time__"])
            if ok and where is not None:
                ok = where(left, right)
            if ok:
                out.append(("tuple", make(left, right), None))
        if window[0] == "interval":
            until = t + (window[2] if side == 0 else -window[1]) + lateness
        else:
            until = start(t) + window[1] + lateness - 1  # closed once end + lateness <= tick
        if tick is None or until >= tick:  # one that no later tuple could match is not kept
            kept[side].append([until, row])
            peak = max(peak, len(kept[0]) + len(kept[1]))
    late[name] = nlate
    kept_peak[name] = peak
    return out


def dedup(items, keys):
    """A Dedup: the first tuple of each key."""
    seen = set()
    out = []
    for it in items:
        if it[0] == "tuple":
            k = tuple(it[1][a] for a in keys)
            if k in seen:
                continue
            seen.add(k)
        out.append(it)
    return out


# ---------------------------------------------------------------------------------------------
# Functions and values
# ---------------------------------------------------------------------------------------------

def split_part(s, sep, n):
    parts = s.split(sep)
    if n > 0:
        return parts[n - 1] if n <= len(parts) else ""
    return parts[n] if -n <= len(parts) else ""


def lower(s):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def utc(ms):
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)


class Double(float):
    """A double of the output, written as sf writes doubles."""


def text(v):
    if isinstance(v, Double):
        r = repr(float(v))
        assert "e" not in r and "n" not in r, "the oracle writes plain doubles only: %r" % v
        return r[:-2] if r.endswith(".0") else r
    return ET.csv_text(v)


def sink(items, attrs):
    lines = [",".join(attrs)]
    for it in items:
        if it[0] == "tuple":
            row = ",".join(text(it[1][a]) for a in attrs)
            lines.append('""' if row == "" else row)
    return "\n".join(lines) + "\n"


def project(row, attrs):
    return {a: row[a] for a in attrs}


# ---------------------------------------------------------------------------------------------
# The queries: each the graph tests/nexmark/QUERY.xml, operator by operator
# ---------------------------------------------------------------------------------------------

# What each graph must say (checked with --graph): operator -> {param: text}; "@input": the
# operator's input streams in order.
PARAMS = {
    "q3": {
        "personEvents": {"file": "data/events.csv", "columns": "subset", "time": "ts", "tick": None},
        "auctionEvents": {"file": "data/events.csv", "columns": "subset", "time": "ts", "tick": None},
        "westPersons": {"where": 'kind == "person" && state in ("OR", "ID", "CA")'},
        "category10": {"where": 'kind == "auction" && category == 10'},
        "bySeller": {"on": "left.id = right.seller", "window": "interval 0 21600000", "lateness": None,
                     "where": None, "@input": [("WestPersons", None), ("Category10", None)]},
    },
    "q7": {
        "bids": {"file": "data/bids.csv", "time": "ts", "tick": "1000"},
        "maxPrice": {"partitionBy": None, "window": "tumbling time 60000", "lateness": "30000"},
        "highest": {"on": "left.price = right.maxprice", "window": "interval 1 60000", "lateness": "30000",
                    "where": None, "@input": [("Bids", None), ("MaxPrices", None)]},
    },
    "q8": {
        "persons": {"file": "data/persons.csv", "time": "ts", "tick": "60000"},
        "auctions": {"file": "data/auctions.csv", "time": "ts", "tick": "60000"},
        "sameHour": {"on": "left.id = right.seller", "window": "tumbling time 3600000", "lateness": "60000",
                     "where": None, "@input": [("Persons", None), ("Auctions", None)]},
        "firstPerHour": {"partitionBy": "id wstart"},
    },
    "q20": {
        "auctions": {"file": "data/auctions.csv", "time": "ts", "tick": "60000"},
        "bids": {"file": "data/bids.csv", "time": "ts", "tick": "60000"},
        "withAuction": {"on": "left.id = right.auction", "window": "interval 0 10800000",
                        "lateness": "30000", "where": "right.ts < left.expires",
                        "@input": [("Auctions", None), ("Bids", None)]},
        "category10": {"where": "category == 10"},
    },
    "q10": {"bids": {"file": "data/bids.csv"}},
    "q13": {"bids": {"file": "data/bids.csv"},
            "side": {"file": "data/side.csv", "schema": "Side", "on": "table.key = key", "missing": None}},
    "q14": {"bids": {"file": "data/bids.csv"}, "band": {"where": "eur > 1000.0 && eur < 50000.0"}},
    "q21": {"events": {"file": "data/events.csv", "columns": "subset"},
            "bids": {"where": 'kind == "bid"'}, "channelIds": {"where": 'id != ""'}},
    "q22": {"bids": {"file": "data/bids.csv"}, "web": {"where": 'starts_with(url, "https://")'}},
}


def q3(data, late, kept):
    """Persons of OR, ID or CA (left) joined with the auctions of category 10 (right) on
    id = seller, the auction within 6 h after the registration; both from events.csv."""
    period = 21600000  # the default tick: the window's non-zero bound
    persons = source(read(data, "events.csv", "kind id name city state ts"), "ts", period)
    persons = filter_items(persons, lambda p: p["kind"] == "person" and p["state"] in ("OR", "ID", "CA"))
    auctions = source(read(data, "events.csv", "kind id seller category ts"), "ts", period)
    auctions = filter_items(auctions, lambda a: a["kind"] == "auction" and a["category"] == 10)
    items = time_merge([sided(persons, 0, "ts"), sided(auctions, 1, "ts")])
    items = join(items, "bySeller", [("id", "seller")], ("interval", 0, 21600000), 0, None,
                 lambda l, r: {"name": l["name"], "city": l["city"], "state": l["state"],
                               "auction": r["id"], "ts": r["ts"], "pts": l["ts"]}, late, kept)
    return sink(items, ["name", "city", "state", "auction", "ts", "pts"])


def q7(data, late, kept):
    """The bids with the highest price of their minute: the maxima of a tumbling time window of
    60000 (one window for all bids, its output's time window_end()) joined (right) with the bids
    (left) on price = maxprice, wend - ts in [1, 60000] (the bid in the window); both with
    lateness 30000."""
    bids = source(read(data, "bids.csv"), "ts", 1000)
    maxes = ET.window_agg(bids, "maxPrice", ET.tumbling_windows(60000), "ts", [], 30000,
                          lambda first, tuples, ws, we: {"maxprice": max(t["price"] for t in tuples), "wend": we},
                          late)
    items = time_merge([sided(bids, 0, "ts"), sided(maxes, 1, "wend")])
    items = join(items, "highest", [("price", "maxprice")], ("interval", 1, 60000), 30000, None,
                 lambda l, r: {"auction": l["auction"], "price": l["price"], "bidder": l["bidder"], "ts": l["ts"],
                               "wend": r["wend"]}, late, kept)
    return sink(items, ["auction", "price", "bidder", "ts", "wend"])


def q8(data, late, kept):
    """Persons (left) joined with auctions (right) on id = seller in the same hour (tumbling time
    3600000, lateness 60000, ticks every minute), then the first pair of each person and hour
    (Dedup on id, wstart)."""
    period = 60000
    persons = source(read(data, "persons.csv"), "ts", period)
    auctions = source(read(data, "auctions.csv"), "ts", period)
    items = time_merge([sided(persons, 0, "ts"), sided(auctions, 1, "ts")])
    items = join(items, "sameHour", [("id", "seller")], ("tumbling", 3600000), 60000, None,
                 lambda l, r: {"id": l["id"], "name": l["name"], "wstart": l["ts"] - c_mod(l["ts"], 3600000),
                               "auction": r["id"], "ts": r["ts"]}, late, kept)
    items = dedup(items, ["id", "wstart"])
    return sink(items, ["id", "name", "wstart", "auction", "ts"])


def c_mod(a, b):
    """C's %: the remainder takes the sign of the dividend."""
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def q20(data, late, kept):
    """Auctions (left) joined with bids (right) on id = auction, the bid within 3 h after the
    auction starts and before it expires, lateness 30 s, ticks every minute; then category 10."""
    period = 60000
    auctions = source(read(data, "auctions.csv"), "ts", period)
    bids = source(read(data, "bids.csv"), "ts", period)
    items = time_merge([sided(auctions, 0, "ts"), sided(bids, 1, "ts")])
    items = join(items, "withAuction", [("id", "auction")], ("interval", 0, 10800000), 30000,
                 lambda l, r: r["ts"] < l["expires"],
                 lambda l, r: {"auction": r["auction"], "bidder": r["bidder"], "price": r["price"],
                               "channel": r["channel"], "ts": r["ts"], "seller": l["seller"],
                               "category": l["category"], "initial": l["initial"],
                               "delay": r["ts"] - l["ts"]}, late, kept)
    items = filter_items(items, lambda t: t["category"] == 10)
    return sink(items, ["auction", "bidder", "price", "channel", "ts", "seller", "category", "initial",
                        "delay"])


def q10(data, late, kept):
    """Each bid with its date, hour and minute, day of the year (date_format), day and hour."""
    def dated(b):
        d = utc(b["ts"])
        date = "%04d-%02d-%02d" % (d.year, d.month, d.day)
        return {"auction": b["auction"], "bidder": b["bidder"], "price": b["price"], "dt": date,
                "hm": "%02d:%02d" % (d.hour, d.minute), "yday": "%03d" % d.timetuple().tm_yday,
                "day": d.day, "hour": d.hour, "path": "bids/%s/%02d/part.csv" % (date, d.hour),
                "ts": b["ts"]}
    items = functor(source(read(data, "bids.csv"), "ts", 1), dated)
    return sink(items, ["auction", "bidder", "price", "dt", "hm", "yday", "day", "hour", "path", "ts"])


def q13(data, late, kept):
    """Each bid with the side table's value for its auction modulo 50 (key = auction % 50, a
    Lookup on table.key = key); a bid whose key the table lacks is dropped (missing = drop)."""
    table = {row["key"]: row["value"] for row in read(data, "side.csv")}
    assert len(table) == len(read(data, "side.csv")), "the side table's keys are unique"
    items = source(read(data, "bids.csv"), "ts", 1)
    items = functor(items, lambda b: dict(b, key=c_mod(b["auction"], 50)))
    items = filter_items(items, lambda b: b["key"] in table)
    items = functor(items, lambda b: dict(b, value=table[b["key"]]))
    return sink(items, ["auction", "bidder", "price", "ts", "value"])


def q14(data, late, kept):
    """The bids with 1000 < price * 0.908 < 50000, with that price, the time of day by hour()
    and the number of 'c' in the url."""
    def classify(b):
        h = utc(b["ts"]).hour
        kind = "otherTime" if h in (7, 19) else ("dayTime" if 8 <= h <= 18 else "nightTime")
        return {"auction": b["auction"], "bidder": b["bidder"], "euros": Double(b["price"] * 0.908),
                "bidTimeType": kind, "ts": b["ts"], "cCount": b["url"].count("c")}
    items = source(read(data, "bids.csv"), "ts", 1)
    items = filter_items(items, lambda b: 1000.0 < b["price"] * 0.908 < 50000.0)
    return sink(functor(items, classify), ["auction", "bidder", "euros", "bidTimeType", "ts", "cCount"])


CHANNEL_RE = re.compile(r"(&|^)channel_id=([^&]*)")


def q21(data, late, kept):
    """The bids (kind "bid" of events.csv) with a channel id: 0-3 for apple, google, facebook,
    baidu in any case, else the url's channel_id parameter; those without one dropped."""
    def channel_id(b):
        ch = lower(b["channel"])
        ids = {"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
        if ch in ids:
            return ids[ch]
        m = CHANNEL_RE.search(b["url"])
        return m.group(2) if m and m.group(2) is not None else ""
    items = source(read(data, "events.csv", "kind auction bidder price channel url ts"), "ts", 1)
    items = filter_items(items, lambda e: e["kind"] == "bid")
    items = functor(items, lambda b: dict(b, channelId=channel_id(b)))
    items = filter_items(items, lambda b: b["channelId"] != "")
    return sink(items, ["auction", "bidder", "price", "channel", "channelId", "ts"])


def q22(data, late, kept):
    """The bids with an https:// url, with its first three directories and its file name."""
    def dirs(b):
        return {"auction": b["auction"], "bidder": b["bidder"], "price": b["price"],
                "channel": b["channel"], "dir1": split_part(b["url"], "/", 4),
                "dir2": split_part(b["url"], "/", 5), "dir3": split_part(b["url"], "/", 6),
                "file": split_part(split_part(b["url"], "?", 1), "/", -1)}
    items = source(read(data, "bids.csv"), "ts", 1)
    items = filter_items(items, lambda b: b["url"].startswith("https://"))
    return sink(functor(items, dirs), ["auction", "bidder", "price", "channel", "dir1", "dir2", "dir3",
                                       "file"])


QUERIES = {"q3": q3, "q7": q7, "q8": q8, "q10": q10, "q13": q13, "q14": q14, "q20": q20, "q21": q21, "q22": q22}


def check_graph(query, path):
    """Errors where the graph's parameters differ from those the oracle assumes."""
    import xml.etree.ElementTree as ElementTree
    ns = {"g": "urn:streamfission:graph:1"}
    ops = {op.get("name"): op for op in ElementTree.parse(path).getroot().findall("g:operator", ns)}
    errors = []
    for opname, want in PARAMS[query].items():
        op = ops.get(opname)
        if op is None:
            errors.append("%s: no operator '%s'" % (path, opname))
            continue
        have = {p.get("name"): " ".join((p.text or "").split()) for p in op.findall("g:param", ns)}
        for pname, value in want.items():
            if pname == "@input":
                got = [(i.get("stream"), i.get("order")) for i in op.findall("g:input", ns)]
            else:
                got = have.get(pname)
            if got != value:
                errors.append("%s: operator '%s': %s is %r, the oracle assumes %r" % (path, opname, pname, got, value))
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("query", choices=sorted(QUERIES))
    ap.add_argument("data")
    ap.add_argument("output")
    ap.add_argument("--late", help="write the late counts of the Joins (JSON) here")
    ap.add_argument("--kept", help="write the peak kept tuples of the Joins (JSON) here")
    ap.add_argument("--graph", help="check the graph's parameters against the oracle's")
    a = ap.parse_args()
    if a.graph:
        errors = check_graph(a.query, a.graph)
        if errors:
            for e in errors:
                print("oracle: " + e, file=sys.stderr)
            sys.exit(2)
    late, kept = {}, {}
    out = QUERIES[a.query](a.data, late, kept)
    with open(a.output, "w", encoding="utf-8", newline="") as f:
        f.write(out)
    for path, what in ((a.late, late), (a.kept, kept)):
        if path:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(what, f, sort_keys=True)
                f.write("\n")


if __name__ == "__main__":
    main()
