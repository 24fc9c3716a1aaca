"""r3runtime.standins: placeholders are inert at import time and gaps once
the engine's code runs; stand-in objects have exactly their fields."""
import importlib
import sys
import unittest

import _path  # noqa: F401
from r3runtime import standins
from r3runtime.errors import StandInGap


class StandInsTest(unittest.TestCase):
    def setUp(self):
        standins._LIVE[0] = False
        self.addCleanup(standins._LIVE.__setitem__, 0, False)

    def test_placeholders_before_and_after_go_live(self):
        P = standins.make_placeholder("pkg.mod.Thing")

        @P
        def f():
            return 1

        self.assertEqual(f(), 1)  # a decorator at import time
        self.assertTrue(standins.is_placeholder(P.attr))
        P()
        standins.go_live()
        with self.assertRaises(StandInGap) as e:
            P()
        self.assertIn("pkg.mod.Thing", str(e.exception))
        with self.assertRaises(StandInGap):
            P.attr

    def test_a_placeholder_instance_called_at_import_time_stays_inert(self):
        # vllm.envs.VLLM_X(), helper(1, 2), obj.method(fn=f): not a decorator,
        # so another placeholder, never an argument handed back or an error.
        inst = standins.make_placeholder("pkg.mod.helper")()
        for args, kwargs in (((), {}), ((1, 2), {}), ((1,), {}), ((len,), {"key": 1})):
            got = inst(*args, **kwargs)
            self.assertTrue(standins.is_placeholder(got), (args, kwargs, got))
        self.assertIs(inst(len), len)  # one callable: used as a decorator
        standins.go_live()
        with self.assertRaises(StandInGap):
            inst(len)

    def test_standin_object_names_what_it_has(self):
        o = standins.StandInObject("vllm.config.ParallelConfig", tensor_parallel_size=2)
        self.assertEqual(o.tensor_parallel_size, 2)
        with self.assertRaises(StandInGap) as e:
            o.enable_foo
        self.assertIn("vllm.config.ParallelConfig", str(e.exception))
        self.assertIn("'enable_foo'", str(e.exception))
        self.assertIn("it has: tensor_parallel_size", str(e.exception))

    def test_finder_serves_the_package_but_not_the_excluded_modules(self):
        finder = standins.StandInFinder("r3fakepkg", {"r3fakepkg.real"}, {"r3fakepkg.api": {"answer": 42}},
                                        {"r3fakepkg.envs": lambda name: None})
        sys.meta_path.insert(0, finder)
        self.addCleanup(sys.meta_path.remove, finder)
        api = importlib.import_module("r3fakepkg.api")
        self.assertEqual(api.answer, 42)
        self.assertIsNone(importlib.import_module("r3fakepkg.envs").SOME_SETTING)
        self.assertTrue(standins.is_placeholder(api.Unknown))  # import time
        self.assertIsNone(finder.find_spec("r3fakepkg.real"))
        self.assertIsNone(finder.find_spec("otherpkg"))
        standins.go_live()
        with self.assertRaises(StandInGap) as e:
            api.other_unknown
        self.assertIn("module r3fakepkg.api", str(e.exception))


if __name__ == "__main__":
    unittest.main()
