#!/usr/bin/python3
"""The bad-input table of docs/cli.md, checked against the program.

Each row of the table between the `<!-- bad-input-table -->` markers is one
input (a shell command run from the repository root, with the build's
r3check first on PATH), the exit status it must end with, how many lines it
must print on stderr, and the first of them. `--check` (the Meson test) runs
every row and fails on any difference; `--update` rewrites the last three
columns from what the program does now (review the diff).

    tests/cli/bad_input_table.py --check BUILD_DIR
    tests/cli/bad_input_table.py --update BUILD_DIR
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, 'docs', 'cli.md')
BEGIN, END = '<!-- bad-input-table -->', '<!-- /bad-input-table -->'


def cell(text):
    return text.replace('|', '\\|')


def uncell(text):
    return text.replace('\\|', '|')


def split_row(line):
    return [uncell(c.strip()) for c in re.split(r'(?<!\\)\|', line.strip())[1:-1]]


def run(command, build):
    env = dict(os.environ)
    env['PATH'] = os.path.join(build, 'src') + os.pathsep + env['PATH']
    env.pop('R3CHECK_CORPUS', None)
    env.pop('R3_ENGINES_DIR', None)
    try:
        p = subprocess.run(['bash', '-c', command], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
    except subprocess.TimeoutExpired:
        return 'timeout', 0, ''
    err = p.stderr.decode(errors='replace').splitlines()
    return str(p.returncode), len(err), err[0] if err else ''


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ('--check', '--update'):
        sys.exit(__doc__)
    mode, build = sys.argv[1], os.path.abspath(sys.argv[2])
    with open(DOC) as f:
        lines = f.read().split('\n')
    start, end = lines.index(BEGIN), lines.index(END)
    rows, failures = 0, 0
    for i in range(start + 1, end):
        line = lines[i]
        if not line.startswith('| ') or line.startswith('| #') or set(line) <= set('|-: '):
            continue
        number, command, status, count, message = split_row(line)
        command = command.strip('`')
        got_status, got_count, got_message = run(command, build)
        rows += 1
        if mode == '--update':
            lines[i] = '| %s | `%s` | %s | %d | %s |' % (
                number, cell(command), got_status, got_count,
                cell(got_message.replace('`', "'")) if got_message else '')
            continue
        want = (status, int(count), message)
        got = (got_status, got_count, got_message.replace('`', "'"))
        if want != got:
            failures += 1
            print('row %s: %s\n  docs/cli.md: exit %s, %d stderr line(s): %s\n  program:     '
                  'exit %s, %d stderr line(s): %s' % (number, command, want[0], want[1], want[2],
                                                      got[0], got[1], got[2]))
    if mode == '--update':
        with open(DOC, 'w') as f:
            f.write('\n'.join(lines))
        print('bad-input table: %d rows updated' % rows)
        return 0
    if rows < 60:
        print('bad-input table: only %d rows (issue 10 asks for at least 60)' % rows)
        return 1
    print('bad-input table: %d rows, %d differ from the program' % (rows, failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
