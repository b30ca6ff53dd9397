#!/usr/bin/env python3
"""gen.py: a deterministic NEXMark-like stream of bids as CSV, for the event-time tests.

    python3 gen.py --rows N --seed S [options] -o FILE

Writes the header `auction,bidder,price,channel,ts` and N rows (RFC 4180, LF line ends, the last
row's included), the way sf's FileSource reads them: ints in decimal, a string quoted only when it
holds a comma, a quote or a line break, quotes inside doubled (some channels hold a comma or a
quote on purpose).

Event time `ts` (ms, never negative) follows a clock that advances by a random step on every row
(a multiple of 10 ms, so rows fall exactly on window boundaries now and then) and sometimes jumps
by a gap (whole windows stay empty). Most rows carry the clock; a few are out of order:
`--small-prob` of them are behind it by 1..`--small-max` ms (less than the graphs' lateness:
accepted), `--big-prob` by `--big-min`..`--big-max` ms (more than any lateness: late, dropped).

`--end MS` stops before the first row whose clock would pass MS (`--rows` is then an upper
bound), and no row is out of order once the clock reaches `--calm-after`: two inputs merged in
event time can so end together and in order.

Bidders and auctions are skewed as in NEXMark: half of the bids go to a few hot auctions and come
from a few hot bidders. Prices are multiples of 10, so equal prices (ties of arg_max) are common.

The random numbers are splitmix64 over the seed, not Python's `random`, so a seed gives the same
file with every Python 3.
"""
import argparse
import sys

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        """An int in [0, n): the bias of the modulo is irrelevant for test data."""
        return self.next() % n

    def between(self, lo, hi):
        """An int in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def chance(self, p):
        return self.next() < p * 2.0**64


CHANNELS = ["web", "app", "web", "app", "partner, inc", 'say "hi"', "bot"]


def csv_field(s):
    if any(c in s for c in ',"\r\n'):
        return '"' + s.replace('"', '""') + '"'
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--start", type=int, default=0, help="the clock's first value (ms)")
    ap.add_argument("--step", type=int, default=50, help="mean step of the clock per row (ms)")
    ap.add_argument("--gap-prob", type=float, default=0.002)
    ap.add_argument("--gap-min", type=int, default=15000)
    ap.add_argument("--gap-max", type=int, default=60000)
    ap.add_argument("--small-prob", type=float, default=0.05)
    ap.add_argument("--small-max", type=int, default=1500)
    ap.add_argument("--big-prob", type=float, default=0.002)
    ap.add_argument("--big-min", type=int, default=15000)
    ap.add_argument("--big-max", type=int, default=30000)
    ap.add_argument("--end", type=int, help="no row with a clock past this (ms)")
    ap.add_argument("--calm-after", type=int, help="no row out of order from this clock on (ms)")
    ap.add_argument("--auctions", type=int, default=200)
    ap.add_argument("--bidders", type=int, default=500)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.rows < 0 or a.step < 0 or a.auctions < 10 or a.bidders < 10:
        ap.error("--rows and --step must be >= 0, --auctions and --bidders >= 10")

    r = SplitMix64(a.seed)
    clock = a.start
    lines = ["auction,bidder,price,channel,ts"]
    for _ in range(a.rows):
        clock += 10 * r.between(0, a.step // 5)
        if r.chance(a.gap_prob):
            clock += r.between(a.gap_min, a.gap_max)
        if a.end is not None and clock > a.end:
            break
        ts = clock
        if a.calm_after is not None and clock >= a.calm_after:
            pass
        elif r.chance(a.small_prob):
            ts = clock - r.between(1, a.small_max)
        elif r.chance(a.big_prob):
            ts = clock - r.between(a.big_min, a.big_max)
        ts = max(ts, 0)
        auction = r.below(5) if r.chance(0.5) else r.below(a.auctions)
        bidder = 1000 + (r.below(10) if r.chance(0.5) else r.below(a.bidders))
        price = 10 * r.between(1, 500)
        channel = CHANNELS[r.below(len(CHANNELS))]
        lines.append("%d,%d,%d,%s,%d" % (auction, bidder, price, csv_field(channel), ts))
    text = "\n".join(lines) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w", encoding="utf-8", newline="") as f:
            f.write(text)


if __name__ == "__main__":
    main()
