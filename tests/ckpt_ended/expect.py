#!/usr/bin/env python3
"""tests/ckpt_ended/expect.py OUTDIR: the inputs of tests/ckpt_ended.sh and, computed without sf,
the outputs its four graphs must write (docs/language.md: a fan-in by position interleaves its
streams by the position in its source of the tuple each item descends from, ties going to the
stream listed first; order="time" merges by event time, ties going to the stream listed first;
sliding, running and tumbling time windows as "Aggregate" and "Time windows" say).

OUTDIR/short_id.csv and OUTDIR/short_ts.csv are the short file (200 rows, k = i % 5 and v =
i * 37 % 101, with id = i or ts = 5 * i); OUTDIR/GRAPH/FILE is what graph tests/ckpt_ended/GRAPH.xml
writes to FILE.
"""
import os
import sys
from collections import defaultdict, deque

N_SHORT, N_LONG = 200, 4000


def write(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(header + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")


def sliding3(rows, keep=lambda v: True):
    """Aggregate partitionBy k, sliding 3: (k, last(x), sum(v), count()) per input tuple kept."""
    win = defaultdict(lambda: deque(maxlen=3))
    out = []
    for k, x, v in rows:
        if not keep(v):
            continue
        w = win[k]
        w.append(v)
        out.append((k, x, sum(w), len(w)))
    return out


def by_position(first, second):
    """A fan-in by position of two streams of (position, row), the first listed winning ties."""
    items = [(p, 0, i, r) for i, (p, r) in enumerate(first)] + [(p, 1, i, r) for i, (p, r) in enumerate(second)]
    return [r for _, _, _, r in sorted(items)]


def main():
    out = sys.argv[1]
    short_id = [(i % 5, i, i * 37 % 101) for i in range(N_SHORT)]
    short_ts = [(i % 5, 5 * i, i * 37 % 101) for i in range(N_SHORT)]
    long_id = [(s % 7, 100000 + s, s * 13 % 97) for s in range(N_LONG)]
    long_ts = [(s % 7, s, s * 13 % 97) for s in range(N_LONG)]
    write(f"{out}/short_id.csv", "k,id,v", short_id)
    write(f"{out}/short_ts.csv", "k,ts,v", short_ts)
    keep = lambda v: v % 4 != 1  # the Filter 'keep'

    # pos_fanin: Short Long by position (row i of the file is at position i, tuple s of the Beacon
    # at s), the Filter, then sliding 3 per k
    merged = by_position(list(enumerate(short_id)), list(enumerate(long_id)))
    write(f"{out}/pos_fanin/out.csv", "k,id,total,n", sliding3(merged, keep))

    # time_fanin: Short Long by ts (both streams ascend), the file first on equal times
    items = [(r[1], 0, i, r) for i, r in enumerate(short_ts)] + [(r[1], 1, i, r) for i, r in enumerate(long_ts)]
    merged = [r for _, _, _, r in sorted(items)]
    write(f"{out}/time_fanin/out.csv", "k,ts,total,n", sliding3(merged, keep))

    # final_emits: the file's tumbling time windows of 100 per k; its ticks come every 1000 and its
    # times end at 995, so every window is emitted by the final tick, which follows the file's last
    # row (position 199): by window end, then key. Then Sums Long by position, the Functor 'both'
    # (v * 3 + k) and a running sum and count per k.
    sums = defaultdict(int)
    for k, ts, v in short_ts:
        sums[(ts // 100 * 100 + 100, k)] += v
    windows = [(k, end, v) for (end, k), v in sorted(sums.items())]
    merged = by_position([(N_SHORT - 1, r) for r in windows], list(enumerate(long_ts)))
    write(f"{out}/final_emits/merged.csv", "k,ts,v", merged)
    total, n, running = defaultdict(int), defaultdict(int), []
    for k, ts, v in merged:
        total[k] += v * 3 + k
        n[k] += 1
        running.append((k, ts, total[k], n[k]))
    write(f"{out}/final_emits/out.csv", "k,ts,total,n", running)

    # sink_ended: the file through the Functor (v * 2 + 1); the Beacon through sliding 3 per k
    write(f"{out}/sink_ended/short_out.csv", "k,id,v", [(k, i, v * 2 + 1) for k, i, v in short_id])
    write(f"{out}/sink_ended/long_out.csv", "k,id,total,n", sliding3(long_id))


if __name__ == "__main__":
    main()
