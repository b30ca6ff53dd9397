#!/usr/bin/env python3
"""gen.py: a deterministic NEXMark-like event stream as CSV files, for tests/nexmark.sh.

    python3 gen.py --events N --seed S -o DIR

Writes, in DIR:
  persons.csv   id,name,email,city,state,ts
  auctions.csv  id,seller,category,initial,expires,ts
  bids.csv      auction,bidder,price,channel,url,ts
  events.csv    kind,id,name,email,city,state,seller,category,initial,expires,auction,bidder,
                price,channel,url,ts: the same events in one file, in the same order, `kind`
                "person", "auction" or "bid", the columns of the other kinds 0 or "" (a query
                reads one kind with FileSource columns="subset" and a Filter on kind)
  side.csv      note,value,key: q13's side table, a value for each key from 0 to 49 except
                those equal to 3 modulo 7, in a random order
all RFC 4180 with LF line ends, the last row's included, as sf's FileSource reads them: ints in
decimal, a string quoted only when it holds a comma, a quote or a line break (some names,
channels and urls hold one on purpose).

The stream follows NEXMark's proportions: of every 50 events 1 is a new person, 3 are new
auctions and 46 are bids. Event time `ts` is epoch milliseconds from --start (default
2026-03-01 00:00:00 UTC), a clock advancing by a random step per event (mean --step ms), so that
the default run spans a few days (hours and dates vary). Most rows carry the clock; a few are out
of order: --small-prob of them are behind it by 1..--small-max ms, --big-prob by
--big-min..--big-max ms (beyond the joins' lateness: late, dropped). The last --calm events have
no row out of order, so that every file ends in order near the same time (see tests/nexmark.sh
on when a time-ordered fan-in stops waiting for an input that ended).

An auction's seller is a recent person (half of them the newest one); a bid's auction is a recent
auction (a third of them one of the last three), its bidder any person so far. Prices spread over
several orders of magnitude. The random numbers are splitmix64 over the seed
(tests/eventtime/gen.py's), not Python's `random`, so a seed gives the same files with every
Python 3.
"""
import argparse
import importlib.util
import os


def eventtime(name):
    """tests/eventtime/NAME.py as a module (by path: this directory has a gen.py and an oracle.py
    of its own)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "eventtime", name + ".py")
    spec = importlib.util.spec_from_file_location("eventtime_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_et = eventtime("gen")
SplitMix64, csv_field = _et.SplitMix64, _et.csv_field

START = 1772323200000  # 2026-03-01 00:00:00 UTC, in ms

FIRST = ["Walter", "Ann", "Deiter", "Peter", "Luke", "Sarah", "Kate", "John", "Julie", "Vicky"]
LAST = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "O'Neil",
        "Smith, Jr.", 'the "Kid"']
CITIES = ["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond",
          "Seattle", "Kent", "Cheyenne"]
STATES = ["AZ", "CA", "ID", "OR", "WA", "WY", "NY", "ca"]
CHANNELS = ["Apple", "apple", "GOOGLE", "Google", "facebook", "FaceBook", "Baidu", "baidu",
            "channel-7", "partner, inc", 'say "hi"', ""]
DIRS = ["Ab", "cd", "EFG", "hij", "kl", "mno", "p"]
SIDE_KEYS = 50  # q13: the side table's keys, auction % SIDE_KEYS
SIDE_VALUES = ["gold ", "silver, plated ", 'say "hi" ', "", "x"]


def url_of(r):
    """A bid's url: mostly NEXMark's https://www.nexmark.com/D1/D2/D3/item.htm?query=1&channel_id=N,
    sometimes with fewer directories, no channel_id, channel_id first in the query or without a
    scheme, or a comma in the query."""
    dirs = [DIRS[r.below(len(DIRS))] for _ in range(3)]
    shape = r.below(10)
    if shape == 0:
        dirs = dirs[:1]
    elif shape == 1:
        dirs = dirs[:2]
    path = "https://www.nexmark.com/" + "/".join(dirs) + "/item.htm"
    cid = str(r.below(1000))
    q = r.below(8)
    if q == 0:
        return path + "?query=1"
    if q == 1:
        return path
    if q == 2:
        return path + "?channel_id=" + cid + "&query=2"  # after '?', not '&': no match
    if q == 3:
        return "channel_id=" + cid + "&ref=" + dirs[0]  # at the start: a match
    if q == 4:
        return path + "?q=a,b&channel_id=" + cid
    if q == 5:
        return path + "?query=1&channel_id=&x=1"  # an empty channel_id
    return path + "?query=1&channel_id=" + cid


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--start", type=int, default=START, help="the clock's first value (ms)")
    ap.add_argument("--step", type=int, default=5000, help="mean step of the clock per event (ms)")
    ap.add_argument("--small-prob", type=float, default=0.05)
    ap.add_argument("--small-max", type=int, default=30000)
    ap.add_argument("--big-prob", type=float, default=0.005)
    ap.add_argument("--big-min", type=int, default=120000)
    ap.add_argument("--big-max", type=int, default=3600000)
    ap.add_argument("--calm", type=int, default=500, help="the last events are all in order")
    ap.add_argument("-o", "--output", required=True, help="the directory")
    a = ap.parse_args()
    if a.events < 0 or a.step < 0:
        ap.error("--events and --step must be >= 0")

    r = SplitMix64(a.seed)
    clock = a.start
    persons, auctions, bids, events = [], [], [], []
    next_person, next_auction = 1000, 1
    for n in range(a.events):
        clock += r.between(0, 2 * a.step)
        ts = clock
        if n >= a.events - a.calm:
            pass
        elif r.chance(a.small_prob):
            ts = clock - r.between(1, a.small_max)
        elif r.chance(a.big_prob):
            ts = clock - r.between(a.big_min, a.big_max)
        phase = n % 50
        if phase == 0 or next_person == 1000:
            pid = next_person
            next_person += 1
            name = FIRST[r.below(len(FIRST))] + " " + LAST[r.below(len(LAST))]
            email = name.split(" ")[0].lower() + str(pid) + "@example.com"
            city = CITIES[r.below(len(CITIES))]
            state = STATES[r.below(len(STATES))]
            persons.append((pid, name, email, city, state, ts))
            events.append(("person", pid, name, email, city, state, 0, 0, 0, 0, 0, 0, 0, "", "", ts))
        elif phase <= 3:
            aid = next_auction
            next_auction += 1
            newest = next_person - 1
            seller = newest if r.chance(0.5) else max(1000, newest - r.below(20))
            category = 10 + r.below(5)
            initial = 10 * r.between(1, 500)
            expires = ts + r.between(600000, 10800000)
            auctions.append((aid, seller, category, initial, expires, ts))
            events.append(("auction", aid, "", "", "", "", seller, category, initial, expires,
                           0, 0, 0, "", "", ts))
        else:
            last = next_auction - 1
            if last < 1:
                auction = 0  # no auction yet: a bid on nothing
            elif r.chance(0.33):
                auction = max(1, last - r.below(3))
            else:
                auction = max(1, last - r.below(60))
            bidder = 1000 + r.below(next_person - 1000)
            price = r.between(1, 10 ** r.between(2, 6))
            channel = CHANNELS[r.below(len(CHANNELS))]
            url = url_of(r)
            bids.append((auction, bidder, price, channel, url, ts))
            events.append(("bid", 0, "", "", "", "", 0, 0, 0, 0, auction, bidder, price, channel,
                           url, ts))

    def write(name, header, rows):
        lines = [header] + [",".join(csv_field(v) if isinstance(v, str) else str(v) for v in row)
                            for row in rows]
        with open(os.path.join(a.output, name), "w", encoding="utf-8", newline="") as f:
            f.write("\n".join(lines) + "\n")
    os.makedirs(a.output, exist_ok=True)
    write("persons.csv", "id,name,email,city,state,ts", persons)
    write("auctions.csv", "id,seller,category,initial,expires,ts", auctions)
    write("bids.csv", "auction,bidder,price,channel,url,ts", bids)
    write("events.csv", "kind,id,name,email,city,state,seller,category,initial,expires,auction,"
          "bidder,price,channel,url,ts", events)
    # q13's side table: a value for each key 0..SIDE_KEYS-1 but those = 3 mod 7 (their bids are
    # dropped), in a shuffled order, with a column the Lookup's schema does not have
    keys = [k for k in range(SIDE_KEYS) if k % 7 != 3]
    for i in range(len(keys) - 1, 0, -1):
        j = r.below(i + 1)
        keys[i], keys[j] = keys[j], keys[i]
    write("side.csv", "note,value,key", [("n%d" % k, SIDE_VALUES[k % len(SIDE_VALUES)] + str(k), k) for k in keys])


if __name__ == "__main__":
    main()
