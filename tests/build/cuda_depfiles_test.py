#!/usr/bin/env python3
"""Every .cu object of a build records the project headers it includes.

  cuda_depfiles_test.py NINJA BUILD_DIR

Ninja rebuilds an object when a header in its depfile changes. Meson before
1.4 gives nvcc no depfile flags, so the build adds them (root meson.build,
nvcc_needs_depfile_args); without them `ninja -t deps` lists no header for
a .cu object and a changed header leaves it stale. Exit 0 when every .cu
object lists at least one header under src/, 1 naming those that do not,
77 (skip) when the build has no .cu object.
"""
import re
import subprocess
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ninja, build = argv[1], argv[2]
    out = subprocess.run([ninja, '-C', build, '-t', 'deps'], check=True,
                         capture_output=True, text=True).stdout
    # The deps log may still hold objects of targets the build no longer has.
    targets = subprocess.run([ninja, '-C', build, '-t', 'targets', 'all'], check=True,
                             capture_output=True, text=True).stdout
    current_objects = {line.split(':')[0] for line in targets.splitlines()}
    objects = {}  # object -> its recorded dependencies
    current = None
    for line in out.splitlines():
        m = re.match(r'^(\S.*?): #deps (\d+)', line)
        if m:
            name = m.group(1)
            current = name if name.endswith('.cu.o') and name in current_objects else None
            if current:
                objects[current] = []
        elif current and line.strip():
            objects[current].append(line.strip())
    if not objects:
        print('SKIP: no .cu object in %s (a build without CUDA)' % build)
        return 77
    bad = []
    for obj, deps in sorted(objects.items()):
        headers = [d for d in deps if re.search(r'(^|/)src/r3/.*\.h$', d)]
        print('%-60s %3d deps, %2d project headers' % (obj, len(deps), len(headers)))
        if not headers:
            bad.append(obj)
    if bad:
        print('no project header recorded for: ' + ', '.join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
