#!/usr/bin/python3
"""`r3check sweep`'s fork server (engines/runtime/r3runtime/zygote.py,
src/r3/engine/fork_server.h) against `--no-fork-server`, end to end:

(a) the fixtures folder gives the same bytes, text and --json, with any
    --jobs, and every adapter was forked from a process that had imported
    torch (a probe adapter records its state: it is the process a launch
    would have been, torch aside);
(b) an adapter that exits nonzero, dies by a signal, is SIGKILLed with its
    process group, or raises at top level reports the same;
(c) a hung adapter gets r3check's SIGTERM (it unwinds), one that ignores it
    is SIGKILLed, one whose client dies is SIGKILLed, one whose fork server
    dies is stopped by its client: no process is left, nor the folder;
(d) a Python without torch: the same output, messages included.
(e) a fork server that does not take a request (the request does not fit
    its socket; it answers `pid 0`, nonsense, a refusal, or nothing): every
    adapter is launched instead, with the bytes of --no-fork-server.

    tests/cli/fork_server_e2e_test.py R3CHECK_BIN     (exits 77, skip, without torch)
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, 'tests', 'engines', 'fixtures')
ENGINES = os.path.join(ROOT, 'engines')
TARGET = os.path.join('vllm', 'model_executor', 'layers', 'fused_moe', 'routed_experts_capturer.py')
PYTHON = '/usr/bin/python3'
BIN = None

HEADER = '''from vllm.config import VllmConfig
from vllm.distributed.parallel_state import get_tp_group
from vllm.forward_context import get_forward_context
from vllm.platforms import current_platform
import os, signal, sys, time
VARIANT = {}
import pathlib as _pathlib
_T = next(p / "capturer_template.py" for p in _pathlib.Path(__file__).resolve().parents if (p / "capturer_template.py").is_file())
exec(compile(_T.read_text(), str(_T), "exec"))
_capture = RoutedExpertsCapturer.capture
_NOTES = os.environ.get("R3_TEST_NOTES")

def _note(what):
    if _NOTES:
        with open(os.path.join(_NOTES, f"{os.getpid()}.{what}"), "w") as f:
            f.write(str(os.getppid()))

def _wrapped_capture(self, layer_id, topk_ids):
'''
FOOTER = '''
    return _capture(self, layer_id, topk_ids)

RoutedExpertsCapturer.capture = _wrapped_capture
'''


def capturer(folder, name, before_capture):
    """The post50874 fixture, `before_capture` run at every capture."""
    path = os.path.join(folder, name)
    with open(path, 'w') as f:
        f.write(HEADER + textwrap.indent(textwrap.dedent(before_capture), '    ') + FOOTER)
    return path


def run(args, env=None, timeout=600):
    p = subprocess.run([BIN, 'sweep', *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def both(args, env=None):
    """(with the fork server, without): each (rc, stdout, stderr)."""
    return run(args, env), run(['--no-fork-server', *args], env)


def normal(text):
    """What legitimately differs between two runs: r3check's pid in the
    name of a crashed run's folder."""
    return re.sub(r'r3check-engine-crash-\d+', 'r3check-engine-crash-PID', text)


def alive(pid):
    """Running, not a zombie waiting for its parent."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def cmdline(pid):
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            return f.read().replace(b'\0', b' ').decode('utf-8', 'replace')
    except OSError:
        return ''


def wait_dead(pids, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


# The adapter r3_adapter.py with, first, a record of its process: what a
# launch decides (argv, sys.path, cwd, environment, umask, descriptors,
# signal dispositions and mask, limits, __main__), and whether torch was
# already imported (it is only when the process was forked from the fork
# server).
PROBE = '''import json as _json, os as _os, resource as _resource, signal as _signal, sys as _sys
def _probe_state():
    fds = {}
    for f in sorted(_os.listdir("/proc/self/fd"), key=int):
        try:
            fds[f] = _os.readlink("/proc/self/fd/" + f).split(":")[0]
        except OSError:
            pass
    sigs = {}
    for s in _signal.valid_signals():
        try:
            h = _signal.getsignal(s)
        except (OSError, ValueError):
            continue
        sigs[int(s)] = h if isinstance(h, int) else getattr(h, "__name__", repr(h))
    umask = _os.umask(0)
    _os.umask(umask)
    main = _sys.modules["__main__"]
    return {"argv": _sys.argv, "path": _sys.path, "executable": _sys.executable, "cwd": _os.getcwd(),
            "env": dict(_os.environ), "umask": umask, "fds": fds, "signals": sigs,
            "blocked": sorted(int(s) for s in _signal.pthread_sigmask(_signal.SIG_BLOCK, [])),
            "flags": list(_sys.flags), "rlimits": [_resource.getrlimit(r) for r in range(16)],
            "nice": _os.nice(0), "sid": _os.getsid(0), "threads": len(_os.listdir("/proc/self/task")),
            "file": __file__, "name": __name__, "main_is_this": main.__dict__ is globals(),
            "main_keys": sorted(k for k in globals() if k.startswith("__")),
            "loader": type(globals().get("__loader__")).__name__, "spec": repr(globals().get("__spec__")),
            "isatty": [_os.isatty(i) for i in range(3)],
            "stdio": [(s.encoding, s.errors, s.line_buffering) for s in (_sys.stdin, _sys.stdout, _sys.stderr)],
            "torch_imported": "torch" in _sys.modules, "ppid_cmdline": open(f"/proc/{_os.getppid()}/cmdline", "rb").read().decode().split(chr(0))}
_state = _probe_state()  # before the file below is open
with open(_os.path.join(_os.environ["R3_PROBE"], f"{_os.getpid()}.json"), "w") as _f:
    _json.dump(_state, _f)
if _os.environ.get("R3_PROBE_RAISE"):
    raise RuntimeError("the probe raises at top level")
'''


def probe_engines(folder):
    """An adapters dir whose vllm/r3_adapter.py is PROBE + the real adapter."""
    eng = os.path.join(folder, 'engines')
    os.makedirs(os.path.join(eng, 'vllm'))
    os.symlink(os.path.join(ENGINES, 'runtime'), os.path.join(eng, 'runtime'))
    os.symlink(os.path.join(ENGINES, 'vllm', 'r3_vllm'), os.path.join(eng, 'vllm', 'r3_vllm'))
    with open(os.path.join(ENGINES, 'vllm', 'r3_adapter.py')) as f:
        adapter = f.read()
    with open(os.path.join(eng, 'vllm', 'r3_adapter.py'), 'w') as f:
        f.write(PROBE + adapter)
    return eng


def probes(folder):
    out = []
    for p in sorted(glob.glob(os.path.join(folder, '*.json'))):
        with open(p) as f:
            out.append(json.load(f))
    return out


class Base(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='r3-fork-server-test-')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        # The fork server's folder and crashed runs' cases go here.
        self.tmpdir = os.path.join(self.tmp, 'tmpdir')
        os.makedirs(self.tmpdir)
        self.env = dict(os.environ, TMPDIR=self.tmpdir)

    def assertNoForkServerLeft(self):
        self.assertEqual(glob.glob(os.path.join(self.tmpdir, 'r3check-zygote-*')), [])
        left = [p for p in os.listdir('/proc') if p.isdigit() and self.tmpdir in cmdline(p)]
        self.assertEqual([cmdline(p) for p in left if alive(p)], [])


class SameBytes(Base):
    def test_the_fixtures_folder(self):
        # A folder of fixtures that pass, fail, cannot be driven and print
        # noise: every kind of line a sweep writes, compared byte for byte.
        versions = os.path.join(self.tmp, 'same-bytes')
        os.makedirs(versions)
        for name in ('post50874', 'sink', 'legacy-singleton', 'device-cache', 'pre50874',
                     'no-sp-trim', 'import-error', 'noisy'):
            os.symlink(os.path.join(FIXTURES, name), os.path.join(versions, name))
        # One job (stderr in order) as text, two jobs as JSON: the two
        # renderers and both schedulers.
        for args in (['--jobs', '1'], ['--jobs', '2', '--json']):
            args = ['--cases', '30', *args, versions]
            (rc, out, err), (rc0, out0, err0) = both(args, self.env)
            self.assertEqual((rc, out), (rc0, out0), args)
            self.assertEqual(rc, 2, err)
            if '1' in args:  # stderr in the order of one job
                self.assertEqual(err, err0, args)
            self.assertNoForkServerLeft()
        summary = json.loads(out)['summary']
        self.assertEqual((summary['pass'], summary['fail'], summary['error']), (3, 4, 1), out)

    def test_every_adapter_is_forked_and_is_the_process_a_launch_would_be(self):
        eng = probe_engines(self.tmp)
        # One fixture of each interface family (singleton, create(), sink,
        # device cache, monolithic sizing): a probe per version is the point,
        # not the whole folder again.
        versions = os.path.join(self.tmp, 'versions')
        os.makedirs(versions)
        picked = ['post50874', 'legacy-singleton', 'sink', 'device-cache', 'monolithic-pre50874',
                  'pre50874']
        for name in picked:
            os.symlink(os.path.join(FIXTURES, name), os.path.join(versions, name))
        states = []
        for name, extra in (('forked', []), ('launched', ['--no-fork-server'])):
            folder = os.path.join(self.tmp, name)
            os.makedirs(folder)
            env = dict(self.env, R3_ENGINES_DIR=eng, R3_PROBE=folder)
            rc, out, err = run(['--cases', '5', '--jobs', '2', *extra, versions], env)
            self.assertIn(rc, (0, 1, 2), err)
            states.append(probes(folder))
        forked, launched = states
        self.assertEqual(len(forked), len(picked))  # one per version
        self.assertEqual(len(launched), len(picked))
        for s in forked:
            self.assertTrue(s['torch_imported'], 'torch was imported before the adapter ran')
            self.assertTrue(s['ppid_cmdline'][1].endswith('r3runtime/zygote.py'), s['ppid_cmdline'])
        for s in launched:
            self.assertFalse(s['torch_imported'])
        key = lambda s: s['argv']
        for f, l in zip(sorted(forked, key=key), sorted(launched, key=key)):
            for s in (f, l):
                del s['torch_imported'], s['ppid_cmdline']
                s['env'].pop('R3_PROBE')
            self.assertEqual(f, l)

    def test_a_top_level_exception(self):
        eng = probe_engines(self.tmp)
        env = dict(self.env, R3_ENGINES_DIR=eng, R3_PROBE=self.tmp, R3_PROBE_RAISE='1')
        post = os.path.join(FIXTURES, 'post50874')
        (rc, out, err), launched = both(['--cases', '5', '--jobs', '1', post], env)
        self.assertEqual((rc, out, err), launched)
        self.assertIn('  ERROR  engine vllm:' + post + ': exited before answering hello (exited with '
                      'status 1)', out)
        self.assertTrue(err.startswith('Traceback (most recent call last):\n  File "' + eng), err)
        self.assertIn('RuntimeError: the probe raises at top level\n', err)


class Ends(Base):
    """Adapters that end badly: the same line with and without, and nothing left over."""

    def sweep_both(self, folder, *args):
        os.makedirs(os.path.join(self.tmp, 'notes'), exist_ok=True)
        env = dict(self.env, R3_TEST_NOTES=os.path.join(self.tmp, 'notes'))
        (rc, out, err), (rc0, out0, err0) = both(['--cases', '5', '--jobs', '1', *args, folder], env)
        self.assertEqual((rc, normal(out), normal(err)), (rc0, normal(out0), normal(err0)))
        self.assertNoForkServerLeft()
        return rc, out, err

    def notes(self, what):
        """{pid: parent pid} of the processes that wrote a note `what`."""
        out = {}
        for p in glob.glob(os.path.join(self.tmp, 'notes', '*.' + what)):
            with open(p) as f:
                out[int(os.path.basename(p).split('.')[0])] = int(f.read())
        return out

    def test_exit_status_and_signals_read_the_same(self):
        v = os.path.join(self.tmp, 'v')
        os.makedirs(v)
        shutil.copy(os.path.join(FIXTURES, 'capturer_template.py'), self.tmp)
        capturer(v, 'a-exit3.py', 'os._exit(3)')
        capturer(v, 'b-segv.py', 'os.kill(os.getpid(), signal.SIGSEGV)')
        capturer(v, 'c-group-killed.py', 'os.killpg(0, signal.SIGKILL)')
        # The fork server's child: its client (the process group's leader)
        # dies alone; launched, the adapter is its group's leader.
        capturer(v, 'd-leader-killed.py', '_note("leader"); os.kill(os.getpgrp(), signal.SIGKILL); time.sleep(3600)')
        capturer(v, 'e-exits-0.py', 'sys.exit(0)')
        rc, out, _ = self.sweep_both(v, '--engine-timeout', '30')
        lines = out.splitlines()
        self.assertEqual(rc, 2)
        for line, why in zip(lines, ['exited with status 3', 'killed by signal 11', 'killed by signal 9',
                                     'killed by signal 9', 'exited with status 0']):
            self.assertIn(f': exited before answering run 1 ({why}); the ', line)
        # The child whose client died was SIGKILLed then (not after the timeout).
        self.assertEqual(len(self.notes('leader')), 2)
        self.assertEqual(wait_dead(list(self.notes('leader'))), [])

    def test_a_hung_adapter_gets_sigterm_and_one_that_ignores_it_sigkill(self):
        v = os.path.join(self.tmp, 'v')
        os.makedirs(v)
        shutil.copy(os.path.join(FIXTURES, 'capturer_template.py'), self.tmp)
        # The adapter's SIGTERM handler unwinds (its engine's shared memory
        # removed): the atexit note says it did.
        capturer(v, 'a-hangs.py', '''
            import atexit
            _note("hung")
            atexit.register(_note, "unwound")
            time.sleep(3600)''')
        capturer(v, 'b-ignores-sigterm.py', '''
            _note("stubborn")
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(3600)''')
        capturer(v, 'c-passes.py', '')
        # Long enough for a launched adapter's hello (it imports torch).
        rc, out, _ = self.sweep_both(v, '--engine-timeout', '20')
        lines = out.splitlines()
        self.assertIn('  ERROR  engine vllm:' + os.path.join(v, 'a-hangs.py') + ': no reply within 20000 ms', lines[0])
        self.assertIn('  ERROR  engine vllm:' + os.path.join(v, 'b-ignores-sigterm.py') + ': no reply within 20000 ms',
                      lines[1])
        self.assertIn('  PASS  ', lines[2])  # after them, judged as usual
        hung, stubborn = self.notes('hung'), self.notes('stubborn')
        self.assertEqual((len(hung), len(stubborn)), (2, 2))  # with and without
        self.assertEqual(sorted(self.notes('unwound')), sorted(hung))
        self.assertEqual(wait_dead(list(hung) + list(stubborn) + list(stubborn.values())), [])

    def sweep_whose_adapter_kills_its_fork_server(self, first, also_passing):
        """Sweeps a version whose adapter (forked) runs `first` and then kills
        its fork server, and (also_passing) a version that passes: (rc, out,
        err, seconds); every process of the first is checked gone."""
        v = os.path.join(self.tmp, 'v')
        os.makedirs(v)
        shutil.copy(os.path.join(FIXTURES, 'capturer_template.py'), self.tmp)
        capturer(v, 'a-kills-its-fork-server.py',
                 '_note("orphan")\n'
                 'if open(f"/proc/{os.getppid()}/cmdline", "rb").read().find(b"zygote.py") >= 0:\n' +
                 textwrap.indent(textwrap.dedent(first).strip('\n'), '    ') + '\n'
                 '    os.kill(os.getppid(), signal.SIGKILL)\n'
                 '    time.sleep(3600)\n')
        if also_passing:
            capturer(v, 'b-passes.py', '')
        os.makedirs(os.path.join(self.tmp, 'notes'))
        env = dict(self.env, R3_TEST_NOTES=os.path.join(self.tmp, 'notes'))
        started = time.time()
        rc, out, err = run(['--cases', '5', '--jobs', '1', '--engine-timeout', '60', v], env)
        seconds = time.time() - started
        self.assertEqual(rc, 2, err)
        self.assertIn(': exited before answering run 1 (exited with status 1)', out.splitlines()[0])
        self.assertIn('r3check: the fork server ended while the adapter (pid ', err)
        (orphan, zygote), = self.notes('orphan').items()
        self.assertEqual(wait_dead([orphan, zygote]), [])
        self.assertNoForkServerLeft()
        return rc, out, err, seconds

    def test_an_adapter_whose_fork_server_dies_is_stopped(self):
        _, out, _, _ = self.sweep_whose_adapter_kills_its_fork_server('pass', also_passing=True)
        self.assertIn('  PASS  ', out.splitlines()[1])  # exec'd: the fork server is gone

    def test_a_signal_before_the_fork_server_dies_does_not_hang_its_client(self):
        # The client's wait for the status is interrupted first (EINTR, as
        # when the process group gets a signal it outlives), then the fork
        # server dies: end of file must still end the wait, whatever errno
        # the interrupted call left.
        _, _, _, seconds = self.sweep_whose_adapter_kills_its_fork_server('''
            signal.signal(signal.SIGUSR1, signal.SIG_IGN)
            os.killpg(os.getpgrp(), signal.SIGUSR1)
            time.sleep(0.5)''', also_passing=False)
        self.assertLess(seconds, 50, 'the client waited for the engine timeout')

# A fork server that listens, reads each request and answers it with
# R3_FAKE_REPLY (nothing when empty), never forking: what a broken or
# foreign zygote.py could say. r3check's client must launch the adapter.
FAKE_ZYGOTE = '''import os, select, socket, sys
path = sys.argv[1]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
srv.bind(path)
srv.listen(16)
os.write(1, b"listening\\n")
reply = os.environ.get("R3_FAKE_REPLY", "").encode()
while True:
    ready, _, _ = select.select([0, srv], [], [])
    if 0 in ready and not os.read(0, 64):
        break
    if srv in ready:
        conn, _ = srv.accept()
        _, fds, _, _ = socket.recv_fds(conn, 1 << 20, 4)
        for fd in fds:
            os.close(fd)
        if reply:
            conn.send(reply)
        conn.close()
os.unlink(path)
'''


def engines_with_zygote(folder, zygote_source):
    """probe_engines, with runtime/r3runtime/zygote.py replaced."""
    eng = probe_engines(folder)
    runtime = os.path.join(eng, 'runtime')
    os.unlink(runtime)
    pkg = os.path.join(runtime, 'r3runtime')
    os.makedirs(pkg)
    real = os.path.join(ENGINES, 'runtime', 'r3runtime')
    for name in os.listdir(real):
        if name != 'zygote.py' and name != '__pycache__':
            os.symlink(os.path.join(real, name), os.path.join(pkg, name))
    with open(os.path.join(pkg, 'zygote.py'), 'w') as f:
        f.write(zygote_source)
    return eng


class NotTaken(Base):
    """Requests the fork server does not take: the client falls back to a
    launch (fork_client.cc), never waits forever, never trusts a bad pid."""

    def assertAllLaunched(self, folder, count):
        states = probes(folder)
        self.assertEqual(len(states), count)
        for s in states:
            self.assertFalse(s['torch_imported'], 'the adapter was launched, not forked')

    def test_a_request_too_big_for_the_socket_is_launched(self):
        # The environment travels in one seqpacket message: past the
        # socket's send buffer sendmsg fails (EMSGSIZE), not EINTR.
        with open('/proc/sys/net/core/wmem_default') as f:
            wmem = int(f.read())
        if wmem > 1500000:
            self.skipTest(f'net.core.wmem_default {wmem}: a request past it would not fit exec either')
        pad = {f'R3_TEST_PAD_{i}': 'x' * 100000 for i in range(wmem // 100000 + 2)}
        eng = probe_engines(self.tmp)
        versions = os.path.join(self.tmp, 'v')
        os.makedirs(versions)
        for name in ('post50874', 'pre50874'):
            os.symlink(os.path.join(FIXTURES, name), os.path.join(versions, name))
        outs = []
        for name, extra in (('forked', []), ('launched', ['--no-fork-server'])):
            folder = os.path.join(self.tmp, name)
            os.makedirs(folder)
            env = dict(self.env, R3_ENGINES_DIR=eng, R3_PROBE=folder, **pad)
            outs.append(run(['--cases', '10', '--jobs', '1', *extra, versions], env, timeout=240))
            self.assertAllLaunched(folder, 2)
        self.assertEqual(outs[0], outs[1])
        self.assertEqual(outs[0][0], 1, outs[0][2])  # pre50874 fails
        self.assertNoForkServerLeft()

    def test_a_fork_server_that_gives_no_pid_is_not_trusted(self):
        eng = engines_with_zygote(self.tmp, FAKE_ZYGOTE)
        post = os.path.join(FIXTURES, 'post50874')
        want = None
        for i, reply in enumerate(('pid 0', 'pid', 'status 0', 'refuse by the test', '')):
            folder = os.path.join(self.tmp, f'probe{i}')
            os.makedirs(folder)
            env = dict(self.env, R3_ENGINES_DIR=eng, R3_PROBE=folder, R3_FAKE_REPLY=reply)
            got = run(['--cases', '10', '--jobs', '1', post], env, timeout=240)
            self.assertEqual(got[0], 0, (reply, got))
            self.assertIn('  PASS  ', got[1], reply)
            self.assertAllLaunched(folder, 1)
            if want is None:
                folder = os.path.join(self.tmp, 'direct')
                os.makedirs(folder)
                want = run(['--no-fork-server', '--cases', '10', '--jobs', '1', post],
                           dict(env, R3_PROBE=folder), timeout=240)
            self.assertEqual(got, want, reply)
        self.assertNoForkServerLeft()


class NoTorch(Base):
    def test_the_same_output_and_messages(self):
        fake = os.path.join(self.tmp, 'fake')
        os.makedirs(fake)
        with open(os.path.join(fake, 'torch.py'), 'w') as f:
            f.write('raise ImportError("No module named \'torch\' (test)")\n')
        env = dict(self.env, PYTHONPATH=fake)
        post = os.path.join(FIXTURES, 'post50874')
        (rc, out, err), launched = both(['--cases', '5', '--jobs', '1', post, FIXTURES + '/pre50874'], env)
        self.assertEqual((rc, out, err), launched)
        self.assertIn("cannot import torch with /usr/bin/python3: ImportError: No module named 'torch' (test)",
                      out)
        self.assertNoForkServerLeft()


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
