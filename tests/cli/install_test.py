#!/usr/bin/python3
"""`meson install` gives an r3check that needs no source tree.

Installs the build into a fresh DESTDIR (the build's own prefix under a
temporary folder), then runs the installed r3check from outside the source
tree, with $R3CHECK_CORPUS and $R3_ENGINES_DIR unset: `verify` must run the
installed corpus (PREFIX/share/r3check/corpus, every case file of the source
tree's regressions/, seeds/ and findings/), `verify --help` and `engines`
must name the installed folders, and `--sut vllm:` must start the installed
adapter. Then the staged prefix is moved elsewhere and the same holds at the
new place: the binary finds its data dir from its own path, nothing points
back at the build or the source tree.

    tests/cli/install_test.py MESON BUILD_DIR PREFIX BINDIR DATADIR

Exit 0 pass, 1 a difference, 77 skip (a build dir copied from elsewhere,
whose install plan names the original's files; a BINDIR or DATADIR outside
the prefix, which a DESTDIR does not stage).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS_PARTS = ('regressions', 'seeds', 'findings')
failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print('FAIL: ' + what)


def run(argv, cwd, env):
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')


def case_files(corpus):
    return sorted(os.path.join(part, name) for part in CORPUS_PARTS
                  for name in os.listdir(os.path.join(corpus, part)) if name.endswith('.r3case'))


def check_installed(r3check, data, cwd, env, elsewhere, run_adapter=False):
    """r3check runs on its data dir `data` and names none of `elsewhere`."""
    corpus = os.path.join(data, 'corpus')
    engines = os.path.join(data, 'engines')
    print('checking ' + r3check)
    expect(os.access(r3check, os.X_OK), r3check + ' is not an executable')
    expect(case_files(corpus) == case_files(os.path.join(ROOT, 'corpus')),
           corpus + ' does not hold the source corpus\'s regressions, seeds and findings')

    said = []  # what r3check printed about itself
    rc, out, err = run([r3check, 'verify', '--cases', '10', '--json'], cwd, env)
    said += [out, err]
    expect(rc == 0, 'verify --cases 10: exit %d\n%s%s' % (rc, out, err))
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    expect(j.get('corpus') == corpus, 'verify ran the corpus %r, not %s' % (j.get('corpus'), corpus))
    for part in CORPUS_PARTS:
        want = len(os.listdir(os.path.join(corpus, part)))
        got = j.get('sources', {}).get(part, {}).get('cases')
        expect(got == want, 'verify: %s: %r cases, not %d' % (part, got, want))
    expect(j.get('sources', {}).get('generated', {}).get('cases') == 10,
           'verify: not 10 generated cases: %r' % j.get('sources'))

    rc, out, err = run([r3check, 'verify', '--help'], cwd, env)
    said += [out, err]
    expect(rc == 0 and '(default: $R3CHECK_CORPUS, else ' + corpus + ')' in out,
           'verify --help does not name %s as the default corpus:\n%s%s' % (corpus, out, err))

    rc, out, err = run([r3check, 'engines'], cwd, env)
    said += [out, err]
    expect(rc == 0 and '(docs/engines.md; adapters in ' + engines + ')' in out,
           'engines does not list the adapters in %s:\n%s%s' % (engines, out, err))

    # The adapter it starts for --sut vllm: (a stand-in interpreter records
    # its arguments; the vLLM code is a fixture of the source tree, as a
    # user's checkout would be anywhere).
    argv_file = os.path.join(cwd, 'python-argv.txt')
    python = os.path.join(cwd, 'python.sh')
    with open(python, 'w') as f:
        f.write('#!/bin/sh\nprintf \'%%s\\n\' "$@" > \'%s\'\nexit 3\n' % argv_file)
    os.chmod(python, 0o755)
    fixture = os.path.join(ROOT, 'tests', 'engines', 'fixtures', 'post50874')
    seed = os.path.join(corpus, 'seeds', 'tp2-dp2-eager.r3case')
    run([r3check, 'check', '--sut', 'vllm:' + fixture, '--engine-python', python, seed], cwd, env)
    try:
        with open(argv_file) as f:
            started = f.read().split('\n')[0]
    except OSError:
        started = None
    expect(started == os.path.join(engines, 'vllm', 'r3_adapter.py'),
           '--sut vllm: started %r, not the installed adapter' % started)
    # With torch, the installed adapter checks the fixture for real.
    if run_adapter and run(['/usr/bin/python3', '-c', 'import torch'], cwd, env)[0] == 0:
        rc, out, err = run([r3check, 'check', '--sut', 'vllm:' + fixture, seed], cwd, env)
        expect(rc == 0, 'check --sut vllm:%s with the installed adapter: exit %d\n%s%s'
               % (fixture, rc, out, err))

    for path in elsewhere:
        for text in said:
            expect(path not in text, 'r3check named %s:\n%s' % (path, text))


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    meson, build, prefix, bindir, datadir = sys.argv[1:]
    build = os.path.realpath(build)
    with open(os.path.join(build, 'meson-info', 'meson-info.json')) as f:
        configured = json.load(f)['directories']['build']
    if os.path.realpath(configured) != build:
        print('skip: %s was configured as %s; its install plan names that build\'s files'
              % (build, configured))
        return 77
    if os.path.isabs(bindir) or os.path.isabs(datadir):
        # Outside the prefix: r3check finds its data dir by that absolute
        # path, which a DESTDIR staging does not hold.
        print('skip: bindir %s / datadir %s lie outside the prefix' % (bindir, datadir))
        return 77

    tmp = tempfile.mkdtemp(prefix='r3check-install-')
    try:
        dest = os.path.join(tmp, 'destdir')
        rc, out, err = run([meson, 'install', '-C', build, '--no-rebuild', '--quiet',
                            '--destdir', dest], tmp, None)
        if rc != 0:
            print('meson install --destdir %s: exit %d\n%s%s' % (dest, rc, out, err))
            return 1
        env = {k: v for k, v in os.environ.items() if k not in ('R3CHECK_CORPUS', 'R3_ENGINES_DIR')}
        work = os.path.join(tmp, 'work')
        os.mkdir(work)
        elsewhere = [ROOT, build]
        staged = dest + os.path.abspath(prefix)
        check_installed(os.path.join(staged, bindir, 'r3check'),
                        os.path.join(staged, datadir, 'r3check'), work, env, elsewhere)
        moved = os.path.join(tmp, 'moved', 'elsewhere')
        shutil.move(staged, moved)
        check_installed(os.path.join(moved, bindir, 'r3check'),
                        os.path.join(moved, datadir, 'r3check'), work, env, elsewhere + [staged],
                        run_adapter=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d failure(s)' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
