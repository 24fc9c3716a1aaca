"""r3runtime.profile: the one line R3_ADAPTER_PROFILE=1 prints at exit
(bench/engine_bench.py reads it): runs and engine calls counted after the
hello only, nested engine calls once, nothing printed when off."""
import json
import pathlib
import subprocess
import sys
import textwrap
import unittest

RUNTIME = pathlib.Path(__file__).resolve().parents[3] / "engines" / "runtime"

# Start-up work before the hello, then three run requests: the second calls
# the engine twice, once with a nested call inside (a hand-off reaching
# capture()), the third not at all.
SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from r3runtime import profile

    def spin(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    profile.engine_call(spin, 0.5)  # the probe's construction: not counted
    profile.request_read()
    spin(0.5)
    profile.reply_sent()
    profile.hello_sent()
    profile.request_read()
    profile.engine_call(spin, 0.02)
    profile.reply_sent()
    profile.request_read()
    profile.engine_call(lambda: profile.engine_call(spin, 0.01))
    profile.engine_call(spin, 0.01)
    spin(0.02)  # the adapter's own time
    profile.reply_sent()
    profile.reply_sent()  # a second reply without a request: not a run
    profile.request_read()
    spin(0.01)
    profile.reply_sent()
""")

PREFIX = "r3_adapter profile: "


def run(profile_value):
    env = {"PATH": "/usr/bin:/bin"}
    if profile_value is not None:
        env["R3_ADAPTER_PROFILE"] = profile_value
    p = subprocess.run([sys.executable, "-c", SCRIPT, str(RUNTIME)], capture_output=True, text=True, env=env,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


class ProfileLineTest(unittest.TestCase):
    def test_counts_after_the_hello(self):
        rc, out, err = run("1")
        self.assertEqual((rc, out), (0, ""), err)
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith(PREFIX), err)
        got = json.loads(lines[0][len(PREFIX):])
        self.assertEqual(sorted(got), ["busy_s", "engine_calls", "engine_s", "process_cpu_s", "runs"])
        self.assertEqual(got["runs"], 3)
        self.assertEqual(got["engine_calls"], 3)  # the nested call counts once
        # Engine time: the 0.04 s after the hello, not the probe's 0.5 s
        # (generous bounds: a loaded machine stretches each spin a little).
        self.assertGreaterEqual(got["engine_s"], 0.04)
        self.assertLess(got["engine_s"], 0.4)
        # Busy: the three requests (0.04 engine + 0.03 own), not the 1 s before.
        self.assertGreaterEqual(got["busy_s"], 0.07)
        self.assertLess(got["busy_s"], 0.45)
        self.assertGreater(got["busy_s"], got["engine_s"])
        # CPU time from the hello on: one thread cannot spend more than the
        # wall time since (the requests and the gaps between them).
        self.assertGreater(got["process_cpu_s"], 0)
        self.assertLessEqual(got["process_cpu_s"], got["busy_s"] + 0.05)

    def test_off_prints_nothing(self):
        for value in (None, "", "0"):
            self.assertEqual(run(value), (0, "", ""), value)


if __name__ == "__main__":
    unittest.main()
