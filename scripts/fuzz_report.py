#!/usr/bin/env python3
"""The overnight driver's morning report (scripts/fuzz-overnight.sh): a JSON
summary and an SVG plot of coverage and corpus size over the night, from the
progress rows the driver logged (state/progress.tsv: seconds, execs, cov, ft,
corpus, exec/s, findings). A run resumed after a kill has several parts, each
begun by a "part SECONDS" row, and libFuzzer counts each part's executions
from 0: the report adds them up. Python 3 standard library only.

    scripts/fuzz_report.py STATE_DIR TARGET SECONDS CORPUS_BEFORE CORPUS_AFTER FINDING...
"""
import json
import os
import sys


def read_rows(path):
    """The progress rows, execs summed over the parts of the run; and the
    number of parts."""
    rows = []
    done = 0  # the executions of the parts before this one
    last = 0  # this part's latest count
    parts = 0
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                words = line.split()
                if words[:1] == ['part']:
                    done += last
                    last = 0
                    parts += 1
                    continue
                if len(words) == 7 and all(p.isdigit() for p in words):
                    row = [int(p) for p in words]
                    if row[1] < last:  # a restart without its "part" row
                        done += last
                        parts += 1
                    last = row[1]
                    row[1] += done
                    rows.append(row)
    return rows, max(parts, 1)


def polyline(points, x0, y0, w, h, xmax, ymax, colour):
    pts = ' '.join('%.1f,%.1f' % (x0 + w * x / max(xmax, 1), y0 + h - h * y / max(ymax, 1))
                   for x, y in points)
    return '<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>\n' % (colour, pts)


def panel(title, points, y0, xmax, colour):
    x0, w, h = 70, 600, 150
    ymax = max([y for _, y in points] + [1])
    out = '<text x="10" y="%d" font-size="13">%s (max %d)</text>\n' % (y0 - 8, title, ymax)
    out += '<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>\n' % (
        x0, y0, w, h)
    out += '<text x="%d" y="%d" font-size="11" text-anchor="end">%d</text>\n' % (x0 - 4, y0 + 10,
                                                                              ymax)
    out += '<text x="%d" y="%d" font-size="11" text-anchor="end">0</text>\n' % (x0 - 4, y0 + h)
    if points:
        out += polyline(points, x0, y0, w, h, xmax, ymax, colour)
    return out


def main():
    state, target, seconds, before, after = sys.argv[1:6]
    findings = [f for f in sys.argv[6:] if f]
    rows, parts = read_rows(os.path.join(state, 'progress.tsv'))
    last = rows[-1] if rows else [0] * 7
    report = {
        'target': target,
        'seconds': int(seconds),
        'execs': last[1],
        'parts': parts,
        'coverage': {'cov': last[2], 'ft': last[3]},
        'corpus': {'before': int(before), 'after': int(after), 'fuzzer_corpus': last[4]},
        'findings': findings,
        'timeline': [{'t': r[0], 'execs': r[1], 'exec_per_s': r[5], 'cov': r[2], 'ft': r[3],
                      'corpus': r[4], 'findings': r[6]} for r in rows],
    }
    report['exec_per_s_median'] = (sorted(r[5] for r in rows)[len(rows) // 2] if rows else 0)
    with open(os.path.join(state, 'report.json'), 'w') as f:
        json.dump(report, f, indent=1)
        f.write('\n')
    xmax = max([r[0] for r in rows] + [1])
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="700" height="460" '
           'font-family="sans-serif">\n<rect width="100%%" height="100%%" fill="white"/>\n'
           '<text x="10" y="20" font-size="15">fuzz-overnight %s: %d s, %d execs, %d findings'
           '</text>\n' % (target, int(seconds), last[1], len(findings)))
    svg += panel('coverage (cov)', [(r[0], r[2]) for r in rows], 60, xmax, '#1f77b4')
    svg += panel('corpus size', [(r[0], r[4]) for r in rows], 270, xmax, '#2ca02c')
    svg += '<text x="370" y="445" font-size="12" text-anchor="middle">seconds (0 to %d)</text>\n' % (
        xmax)
    svg += '</svg>\n'
    with open(os.path.join(state, 'report.svg'), 'w') as f:
        f.write(svg)


if __name__ == '__main__':
    main()
