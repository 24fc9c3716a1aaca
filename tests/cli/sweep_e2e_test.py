#!/usr/bin/python3
"""`r3check sweep` end to end, against the fixture engines of tests/engines/.

(a) a folder of fixture capturer files: verdicts, failing invariants, exit
    status, identical contents judged once, --json;
(b) a git repository of our own (good, good, good, a commit that does not
    touch the capture code, bad, bad, bad, bad): CHECKOUT@A..B judges the
    touching commits oldest first, CHECKOUT@REV one, --first-bad names the
    first bad commit judging fewer commits than the range has;
(c) bad inputs: one line on stderr, exit status 2.

    tests/cli/sweep_e2e_test.py R3CHECK_BIN     (exits 77, skip, without torch)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, 'tests', 'engines', 'fixtures')
TARGET = os.path.join('vllm', 'model_executor', 'layers', 'fused_moe', 'routed_experts_capturer.py')
PYTHON = '/usr/bin/python3'
CASES = '30'
BIN = None


def fixture(name):
    return os.path.join(FIXTURES, name, TARGET)


def inlined(name, note):
    """A fixture as one self-contained file: the template's text in place of
    its exec() (a revision is judged from a folder with no template above it)."""
    with open(fixture(name)) as f:
        text = f.read()
    head = text[:text.index('import pathlib as _pathlib')]
    with open(os.path.join(FIXTURES, 'capturer_template.py')) as f:
        return f'# {note}\n' + head + f.read()


def sweep(*args, env=None):
    p = subprocess.run([BIN, 'sweep', '--cases', CASES, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=600, env=env)
    return p.returncode, p.stdout, p.stderr


def table(out):
    """{label: line} of a sweep's table (every line but the summary)."""
    rows = {}
    for line in out.splitlines():
        if line.startswith('sweep') or line.startswith('first bad'):
            continue
        rows[line.split('  ')[0]] = line
    return rows


def verdict(line):
    return line.split('  ')[1]


def invariants(line):
    """The failing invariants a FAIL line names."""
    fields = line.split('  ')
    return fields[3].split(',') if fields[1] == 'FAIL' else []


class FolderSweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='r3-sweep-test-')
        # The template in a parent folder of the copies, as the fixtures need.
        shutil.copy(os.path.join(FIXTURES, 'capturer_template.py'), cls.tmp)
        cls.dir = os.path.join(cls.tmp, 'versions')
        os.makedirs(os.path.join(cls.dir, 'nested'))
        cls.files = {}
        for name, fix in [('a-post50874.py', 'post50874'),
                          ('b-legacy-singleton.py', 'legacy-singleton'),
                          ('c-pre50874.py', 'pre50874'),
                          ('d-no-sp-trim.py', 'no-sp-trim'),
                          ('e-shard-start-without-s.py', 'shard-start-without-s'),
                          ('f-import-error.py', 'import-error'),
                          ('nested/g-post50874-again.py', 'post50874')]:
            path = os.path.join(cls.dir, name)
            shutil.copy(fixture(fix), path)
            cls.files[fix if 'again' not in name else 'again'] = path
        # A corpus whose first failing case is no minimal one.
        cls.corpus = os.path.join(cls.tmp, 'corpus')
        os.makedirs(os.path.join(cls.corpus, 'seeds'))
        for seed in ['dp1-tp1-graph.r3case', 'tp2-dp2-eager.r3case']:
            shutil.copy(os.path.join(ROOT, 'corpus', 'seeds', seed), os.path.join(cls.corpus, 'seeds'))
        # Not a version: only *.py files are.
        with open(os.path.join(cls.dir, 'notes.txt'), 'w') as f:
            f.write('not a capturer\n')
        cls.rc, cls.out, cls.err = sweep(cls.dir)
        cls.rows = table(cls.out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_one_line_per_version_in_path_order(self):
        self.assertEqual(list(self.rows), sorted(
            os.path.join(self.dir, n) for n in
            ['a-post50874.py', 'b-legacy-singleton.py', 'c-pre50874.py', 'd-no-sp-trim.py',
             'e-shard-start-without-s.py', 'f-import-error.py', 'nested/g-post50874-again.py']),
            self.out)

    def test_verdicts(self):
        f = self.files
        self.assertEqual(verdict(self.rows[f['post50874']]), 'PASS')
        self.assertEqual(verdict(self.rows[f['legacy-singleton']]), 'PASS')
        for bad in ['pre50874', 'no-sp-trim', 'shard-start-without-s']:
            self.assertEqual(verdict(self.rows[f[bad]]), 'FAIL', self.rows[f[bad]])
        self.assertEqual(verdict(self.rows[f['import-error']]), 'ERROR')

    def test_failing_invariants(self):
        f = self.files
        # pre50874 raises on the SP-padded gathered batch: the rank captures nothing.
        self.assertEqual(invariants(self.rows[f['pre50874']]),
                         ['rows-exact', 'concat-global'])
        # The SP padding captured, DP0's tail captured by DP1: wrong rows, not the size.
        self.assertEqual(invariants(self.rows[f['no-sp-trim']]), ['rows-exact', 'concat-global'])
        self.assertEqual(invariants(self.rows[f['shard-start-without-s']]),
                         ['rows-exact', 'concat-global'])

    def test_minimized_case_on_the_line(self):
        line = self.rows[self.files['no-sp-trim']]
        m = re.search(r'  minimized: (.*?)  sha256 ', line)
        self.assertIsNotNone(m, line)
        case = 'r3case 1\n' + m.group(1).replace('; ', '\n') + '\n'
        # The one-line case is the case: back as a file, the engine still fails it.
        path = os.path.join(self.tmp, 'minimized.r3case')
        with open(path, 'w') as fh:
            fh.write(case)
        p = subprocess.run([BIN, 'check', '--sut', 'vllm:' + self.files['no-sp-trim'], path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        # ... and a correct version passes it.
        p = subprocess.run([BIN, 'check', '--sut', 'vllm:' + self.files['post50874'], path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_error_line_names_the_reason(self):
        line = self.rows[self.files['import-error']]
        self.assertIn('ImportError', line)
        self.assertIn("fused_topk", line)

    def test_identical_contents_judged_once(self):
        line = self.rows[self.files['again']]
        self.assertIn('  same as ' + self.files['post50874'], line)
        self.assertIn('sweep: 7 version(s), 6 judged (1 same as an earlier one): '
                      '3 PASS, 3 FAIL, 1 ERROR', self.out)

    def test_sha256_and_interface(self):
        import hashlib
        for key in ['post50874', 'pre50874']:
            with open(self.files[key], 'rb') as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()[:12]
            self.assertIn('  sha256 ' + digest + '  ', self.rows[self.files[key]])
        self.assertRegex(self.rows[self.files['post50874']],
                         r'interface unknown / RoutedExpertsCapturer\(max_num_batched_tokens, vllm_config')
        self.assertIn('create() + init_buffer(', self.rows[self.files['legacy-singleton']])

    def test_exit_status(self):
        self.assertEqual(self.rc, 2, self.err)  # import-error could not be driven
        rc, out, err = sweep(self.files['post50874'], self.files['pre50874'])
        self.assertEqual(rc, 1, out + err)
        rc, out, err = sweep(self.files['post50874'], self.files['legacy-singleton'])
        self.assertEqual(rc, 0, out + err)

    def test_no_progress_when_stderr_is_no_terminal(self):
        self.assertNotIn('sweep: 1/', self.err)

    def test_json(self):
        args = ['--json', '--corpus', self.corpus, self.files['post50874'], self.files['pre50874'],
                self.files['again']]
        rc, out, err = sweep(*args)
        self.assertEqual(rc, 1, err)
        doc = json.loads(out)
        self.assertEqual(list(doc), ['command', 'sources', 'policy', 'mutants', 'engine_device',
                                     'corpus', 'seed', 'generated_cases', 'versions', 'summary',
                                     'exit_status'])
        v = doc['versions']
        self.assertEqual([x['verdict'] for x in v], ['PASS', 'FAIL', 'PASS'])
        self.assertEqual(v[1]['failing_invariants'], ['rows-exact', 'concat-global'])
        self.assertEqual(v[2]['same_as'], self.files['post50874'])
        # The one-line case is the minimizer's answer for the first failure.
        first = v[1]['first_failure']
        self.assertEqual(first, os.path.join(self.corpus, 'seeds', 'tp2-dp2-eager.r3case'))
        p = subprocess.run([BIN, 'minimize', '--sut', 'vllm:' + self.files['pre50874'], first],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [l for l in p.stdout.splitlines() if l and not l.startswith('#')]
        self.assertEqual(lines[0], 'r3case 1')
        self.assertEqual(v[1]['minimized_case'], '; '.join(lines[1:]))
        with open(first) as fh:
            original = [l for l in fh.read().splitlines() if l and not l.startswith('#')]
        self.assertNotEqual(v[1]['minimized_case'], '; '.join(original[1:]))
        self.assertEqual(doc['summary'], {'versions': 3, 'judged': 2, 'pass': 2, 'fail': 1,
                                          'error': 0})
        rc2, out2, _ = sweep(*args)
        self.assertEqual(out2, out)  # deterministic
        for jobs in ['1', '3']:
            rc3, out3, err3 = sweep('--jobs', jobs, *args)
            self.assertEqual((rc3, out3), (rc, out), f'--jobs {jobs}: {err3}')

    def test_jobs_give_the_bytes_of_one_job(self):
        # setUpClass ran with the default (one job per core); the copy waits
        # for the version it copies, lines come in version order.
        for jobs in ['1', '4']:
            rc, out, err = sweep('--jobs', jobs, self.dir)
            self.assertEqual((rc, out), (self.rc, self.out), f'--jobs {jobs}: {err}')

    def test_an_error_while_judging_stops_where_one_job_stops(self):
        # A corpus case that does not parse: the first version to be judged
        # stops the sweep with exit 2 and verify's one-line message, after the
        # lines before it (none here), with any number of jobs.
        bad = os.path.join(self.tmp, 'bad-corpus')
        os.makedirs(os.path.join(bad, 'seeds'), exist_ok=True)
        with open(os.path.join(bad, 'seeds', 'broken.r3case'), 'w') as fh:
            fh.write('r3case 1\ndp 0\n')
        got = []
        for jobs in ['1', '2']:
            rc, out, err = sweep('--jobs', jobs, '--corpus', bad, self.files['post50874'],
                                 self.files['pre50874'])
            got.append((rc, out, err.splitlines()[-1:]))
        self.assertEqual(got[0][0], 2, got)
        self.assertIn('broken.r3case', got[0][2][0])
        self.assertEqual(got[0], got[1])


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@example.org',
               GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@example.org',
               GIT_AUTHOR_DATE='2026-01-02T03:04:05Z', GIT_COMMITTER_DATE='2026-01-02T03:04:05Z')
    return subprocess.run(['git', '-C', repo, *args], check=True, stdout=subprocess.PIPE,
                          text=True, env=env).stdout.strip()


class RevisionSweep(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='r3-sweep-git-')
        cls.repo = os.path.join(cls.tmp, 'fork')
        os.makedirs(os.path.join(cls.repo, os.path.dirname(TARGET)))
        git(cls.repo, 'init', '-q')
        cls.commits = {}
        history = [('g0', 'post50874'), ('g1', 'post50874'), ('g2', 'post50874'),
                   ('g3', 'post50874'), ('docs', None), ('b1', 'no-sp-trim'),
                   ('b2', 'no-sp-trim'), ('b3', 'no-sp-trim'), ('b4', 'no-sp-trim')]
        for name, fix in history:
            if fix is None:
                with open(os.path.join(cls.repo, 'README.md'), 'w') as f:
                    f.write('a commit that does not touch the capture code\n')
            else:
                with open(os.path.join(cls.repo, TARGET), 'w') as f:
                    f.write(inlined(fix, f'version {name}'))
            git(cls.repo, 'add', '-A')
            git(cls.repo, 'commit', '-q', '-m', f'{name}: {fix or "readme"}')
            cls.commits[name] = git(cls.repo, 'rev-parse', 'HEAD')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def label(self, name):
        return f'{self.repo}@{self.commits[name][:10]}'

    def test_range_judges_the_touching_commits_oldest_first(self):
        rc, out, err = sweep(f'{self.repo}@{self.commits["g0"]}..{self.commits["b4"]}')
        self.assertEqual(rc, 1, out + err)
        lines = [l for l in out.splitlines() if not l.startswith('sweep')]
        names = ['g1', 'g2', 'g3', 'b1', 'b2', 'b3', 'b4']  # not g0 (A), not docs
        self.assertEqual([l.split(' ')[0] for l in lines], [self.label(n) for n in names], out)
        self.assertEqual([verdict(l) for l in lines], ['PASS'] * 3 + ['FAIL'] * 4, out)
        self.assertIn(f'{self.label("b1")} (2026-01-02 b1: no-sp-trim)  FAIL', out)
        self.assertIn('sweep: 7 version(s), 7 judged: 3 PASS, 4 FAIL, 0 ERROR', out)

    def test_one_revision(self):
        rc, out, err = sweep(f'{self.repo}@{self.commits["g2"]}')
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.startswith(self.label('g2') + ' (2026-01-02 g2: post50874)  PASS'), out)
        rc, out, err = sweep(f'{self.repo}@HEAD')
        self.assertEqual(rc, 1, out + err)
        self.assertTrue(out.startswith(self.label('b4')), out)

    def test_first_bad(self):
        rng = f'{self.repo}@{self.commits["g0"]}..{self.commits["b4"]}'
        rc, out, err = sweep('--first-bad', rng)
        self.assertEqual(rc, 1, out + err)
        self.assertIn(f'first bad: {self.commits["b1"]} b1: no-sp-trim\n', out)
        judged = [l.split(' ')[0] for l in out.splitlines()
                  if not l.startswith('sweep') and not l.startswith('first bad')]
        # The end, the start, then bisection: 5 of the range's 7 commits and A.
        self.assertEqual(judged, [self.label(n) for n in ['b4', 'g0', 'g3', 'b2', 'b1']], out)
        self.assertIn('7 commit(s) in ' + rng + ' touch the capture or sizing code; judged 5', out)
        rc, out, err = sweep('--first-bad', '--json', rng)
        self.assertEqual(rc, 1, err)
        fb = json.loads(out)['first_bad']
        self.assertEqual(fb['outcome'], 'found')
        self.assertEqual(fb['commit']['sha'], self.commits['b1'])
        self.assertEqual(fb['last_good']['sha'], self.commits['g3'])
        self.assertEqual(fb['judged'], [self.commits[n] for n in ['b4', 'g0', 'g3', 'b2', 'b1']])
        self.assertEqual(fb['range_commits'], 7)

    def test_first_bad_when_the_assumption_does_not_hold(self):
        rc, out, err = sweep('--first-bad', f'{self.repo}@{self.commits["g0"]}..{self.commits["g3"]}')
        self.assertEqual(rc, 0, out + err)
        self.assertIn("first bad: none: the range's end " + self.label('g3') + ' passes', out)
        rc, out, err = sweep('--first-bad', f'{self.repo}@{self.commits["b1"]}..{self.commits["b4"]}')
        self.assertEqual(rc, 1, out + err)
        self.assertIn("first bad: at or before the range's start: " + self.label('b1') +
                      ' already fails', out)

    def test_bad_revisions(self):
        for source, message in [
                (f'{self.repo}@no-such-rev', f"no commit 'no-such-rev' in {self.repo}"),
                (f'{self.repo}@{self.commits["g0"]}..no-such-rev',
                 f"no commit 'no-such-rev' in {self.repo}"),
                (f'{self.repo}@{self.commits["g3"]}..{self.commits["docs"]}', 'no commit in '),
                (f'{self.repo}/vllm@HEAD', 'is not the top of a git checkout')]:
            rc, out, err = sweep(source)
            self.assertEqual((rc, out), (2, ''), err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertTrue(err.startswith('r3check: ' + source + ': '), err)
            self.assertIn(message, err)


class BadInput(unittest.TestCase):
    def check(self, args, first_line):
        rc, out, err = sweep(*args)
        self.assertEqual((rc, out), (2, ''), err)
        self.assertEqual(err.splitlines(), [first_line])

    def test_no_such_source(self):
        self.check(['/no/such/capturer.py'], 'r3check: /no/such/capturer.py: no such file or folder')

    def test_at_on_a_folder_that_is_no_git_checkout(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = sweep(d + '@HEAD')
            self.assertEqual((rc, out), (2, ''), err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertTrue(err.startswith(f'r3check: {d}@HEAD: {d} is not a git checkout'), err)

    def test_first_bad_takes_one_range(self):
        self.check(['--first-bad', fixture('post50874'), fixture('pre50874')],
                   'r3check: --first-bad: takes one CHECKOUT@A..B source, not 2')
        self.check(['--first-bad', fixture('post50874')],
                   'r3check: --first-bad: takes a CHECKOUT@A..B source, not ' + fixture('post50874'))

    def test_numbers_are_decimal_and_bounded(self):
        # --cases 0x10 used to run 16 cases per version (CLI11 reads hex).
        self.check(['--cases', '0x10', fixture('post50874')],
                   "r3check: --cases: must be a whole number in decimal, not '0x10'")
        self.check(['--budget-ms', '0x10', fixture('post50874')],
                   "r3check: --budget-ms: must be a whole number in decimal, not '0x10'")
        self.check(['--budget-ms', '9200000000000', fixture('post50874')],
                   'r3check: --budget-ms: must be at most 86400000 (a day)')

    def test_jobs_values(self):
        for value, message in [('-1', '--jobs: Value -1 not in range 0 to 256'),
                               ('257', '--jobs: Value 257 not in range 0 to 256'),
                               ('0x2', "--jobs: must be a whole number in decimal, not '0x2'"),
                               ('two', '--jobs: Value two not in range 0 to 256')]:
            rc, out, err = sweep('--jobs', value, fixture('post50874'))
            self.assertEqual((rc, out), (2, ''), err)
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertTrue(err.startswith('r3check: --jobs: '), err)
            self.assertIn(message, err)

    def test_sut_is_no_flag_of_sweep(self):
        self.check(['--sut', 'vllm-pre-50874', fixture('post50874')],
                   'r3check: sweep: --sut does not apply: the SOURCEs are the versions to judge')


def main():
    global BIN
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    BIN = os.path.abspath(sys.argv.pop(1))
    if subprocess.run([PYTHON, '-c', 'import torch'], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        print('skip: no torch for', PYTHON)
        sys.exit(77)
    unittest.main(verbosity=2)


if __name__ == '__main__':
    main()
