#!/usr/bin/env python3
"""committed_view.py RECORD TOPIC < RECORDS: what a read_committed consumer of TOPIC should see.

RECORD is the file of `sf-kafka-mock --record` (its format: tests/tools/kafka_mock_wire.c),
RECORDS every record of TOPIC read read_uncommitted, a line each: "PARTITION OFFSET VALUE"
(kcat -C -X isolation.level=read_uncommitted -e -f '%p %o %s\\n'; VALUE is the rest of the line,
carried through as it is, so '%p %o %k %s\\n' gives keys too). Prints the records a
read_committed consumer should get, in the same form, per partition in offset order: those of
batches written without a transaction, and those of transactions whose EndTxn commit was answered
NO_ERROR. A producer's transaction is its transactional batches since its previous EndTxn answered
NO_ERROR (or its InitProducerId); one ended by an abort, fenced, or never ended is not shown.
Exits 1 when a record lies in no appended batch, or a batch's records are not all there."""
import re
import sys


def fields(line):
    words = line.split()
    kv = dict(w.split('=', 1) for w in words[1:])
    for k, v in kv.items():
        kv[k] = re.sub('%([0-9A-F]{2})', lambda m: chr(int(m.group(1), 16)), v)
    return words[0], kv


def main():
    record, topic = sys.argv[1], sys.argv[2]
    shown, batches, open_txn = [], [], {}  # ranges (partition, first, last); pid -> its open ranges
    for line in open(record):
        event, kv = fields(line)
        if event == 'produce':
            r = (int(kv['partition']), int(kv['offset']), int(kv['offset']) + int(kv['count']) - 1)
            mine = kv['topic'] == topic
            if mine: batches.append(r)
            if kv['transactional'] == '1':
                open_txn.setdefault(kv['pid'], []).append(r if mine else None)
            elif mine:
                shown.append(r)
        elif event == 'end_txn' and kv['error'] == 'NO_ERROR':
            ended = open_txn.pop(kv['pid'], [])
            if kv['result'] == 'commit': shown += [r for r in ended if r]
        elif event == 'fenced':
            open_txn.pop(kv['pid'], None)
    got = {}
    for line in sys.stdin:
        p, o, value = line.rstrip('\n').split(' ', 2)
        got[(int(p), int(o))] = value
    seen = set()
    for p, first, last in batches:
        for o in range(first, last + 1):
            if (p, o) not in got: sys.exit('committed_view.py: offset %d of partition %d was appended, not read' % (o, p))
            seen.add((p, o))
    if set(got) - seen:
        p, o = min(set(got) - seen)
        sys.exit('committed_view.py: partition %d offset %d is in no batch the record file has' % (p, o))
    out = sorted((p, o) for p, first, last in shown for o in range(first, last + 1))
    for p, o in out:
        print('%d %d %s' % (p, o, got[(p, o)]))


main()
