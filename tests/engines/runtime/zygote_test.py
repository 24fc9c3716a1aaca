"""r3runtime.zygote, in-process: the request format of r3check's client
(src/r3/engine/internal/fork_client.cc) and what the fork server refuses,
so that the client execs the adapter itself. Forking is
tests/cli/fork_server_e2e_test.py's."""
import os
import pathlib
import sys
import unittest

import _path  # noqa: F401
from r3runtime import zygote

ENGINES = pathlib.Path(__file__).resolve().parents[3] / "engines"
ADAPTER = str(ENGINES / "vllm" / "r3_adapter.py")


def request(argv, env, pgid=42, umask=0o22):
    fields = [b"r3zygote 1", str(pgid).encode(), str(umask).encode(), str(len(argv)).encode()]
    fields += [os.fsencode(a) for a in argv]
    fields += [str(len(env)).encode()] + [k + b"=" + v for k, v in env.items()]
    return b"".join(f + b"\0" for f in fields)


def server():
    z = zygote.Zygote.__new__(zygote.Zygote)  # no socket, no signal handlers
    z.python = "/usr/bin/python3"
    z.env = {b"HOME": b"/root", b"LANG": b"C.UTF-8"}
    return z


class ParseTest(unittest.TestCase):
    def test_a_request_round_trips(self):
        env = {b"HOME": b"/root", b"ODD": b"\xff=x"}
        req = zygote.Zygote.parse(request(["/usr/bin/python3", ADAPTER, "--source", "caf\xe9"], env))
        self.assertEqual(req, {"pgid": 42, "umask": 0o22, "argv": ["/usr/bin/python3", ADAPTER, "--source", "caf\xe9"],
                               "env": env})

    def test_malformed_requests_are_refused(self):
        good = request(["/usr/bin/python3", ADAPTER], {b"A": b"1"})
        for bad in (b"", b"r3zygote 2\0" + good[11:], good[:-1], good + b"x\0", good.replace(b"\x001\x00A", b"\x002\x00A")):
            with self.assertRaises((ValueError, IndexError)):
                zygote.Zygote.parse(bad)


class RefusalTest(unittest.TestCase):
    def req(self, argv, env=None):
        return {"argv": argv, "env": dict(server().env) if env is None else env}

    def threads(self, n):
        real = zygote._threads
        zygote._threads = lambda: n
        self.addCleanup(setattr, zygote, "_threads", real)

    def test_the_adapter_of_this_runtime_is_taken(self):
        self.threads(1)
        self.assertIsNone(server().refusal(self.req(["/usr/bin/python3", ADAPTER, "--source", "x"])))

    def test_no_fork_with_threads(self):
        self.threads(3)
        self.assertEqual(server().refusal(self.req(["/usr/bin/python3", ADAPTER])), "the fork server has 3 threads")

    def test_what_a_fork_would_get_wrong_is_refused(self):
        self.threads(1)
        z = server()
        self.assertIn("not this interpreter", z.refusal(self.req(["python3", ADAPTER])))
        self.assertIn("not this interpreter", z.refusal(self.req(["/usr/bin/python3"])))
        self.assertIn("interpreter options", z.refusal(self.req(["/usr/bin/python3", "-X", ADAPTER])))
        self.assertIn("another environment", z.refusal(self.req(["/usr/bin/python3", ADAPTER], {b"HOME": b"/"})))
        self.assertIn("is no adapter of", z.refusal(self.req(["/usr/bin/python3", __file__])))
        self.assertIn("is no adapter of", z.refusal(self.req(["/usr/bin/python3", "/no/such/vllm/r3_adapter.py"])))


if __name__ == "__main__":
    sys.exit(unittest.main())
