#!/usr/bin/env python3
"""Replays corpora under every host mutant: each must be killed.

  expect_kill_each.py R3CHECK REPLAY CORPUS...

The mutants come from `R3CHECK mutants --json` (every one that is neither
equivalent nor GPU-only), so a mutant added to the catalogue is replayed
with no edit here. For each, `REPLAY --expect-kill --mutant=NAME CORPUS...`
must exit 0 (the target reported a finding); any other status, or an empty
list, fails the test. One line per mutant says what happened.
"""
import json
import subprocess
import sys


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    r3check, replay, corpora = argv[1], argv[2], argv[3:]
    listed = json.loads(subprocess.run([r3check, 'mutants', '--json'], check=True,
                                       capture_output=True, text=True).stdout)
    names = [m['name'] for m in listed if not m['equivalent'] and not m['gpu_only']]
    if not names:
        print('expect_kill_each: the catalogue lists no host mutant', file=sys.stderr)
        return 1
    survivors = []
    for name in names:
        run = subprocess.run([replay, '--expect-kill', '--mutant=' + name] + corpora,
                             capture_output=True, text=True)
        if run.returncode == 0:
            print('killed   %s' % name)
        else:
            survivors.append(name)
            print('NOT KILLED %s (exit %d): %s' % (
                name, run.returncode, (run.stderr.strip().splitlines() or [''])[-1]))
    print('%d of %d host mutants killed' % (len(names) - len(survivors), len(names)))
    return 1 if survivors else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
