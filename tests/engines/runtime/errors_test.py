"""r3runtime.errors: a StandInGap anywhere behind an exception is found, and
its fatal names the engine's frame."""
import unittest

import _path  # noqa: F401
from r3runtime.errors import OLD_TORCH, StandInGap, exc_text, gap_fatal, gap_in, one_line, torch_lack_in, torch_lack_text


def _engine_code(obj):
    return obj.missing  # the engine's frame: this file


class ErrorsTest(unittest.TestCase):
    def test_gap_is_an_attribute_error_so_getattr_defaults_work(self):
        class Obj:
            def __getattr__(self, name):
                raise StandInGap("Obj", name)

        self.assertIsNone(getattr(Obj(), "x", None))
        self.assertFalse(hasattr(Obj(), "x"))

    def test_gap_in_follows_cause_and_context(self):
        gap = StandInGap("vllm.forward_context.ForwardContext", "foo")
        try:
            try:
                raise gap
            except AttributeError as e:
                raise RuntimeError("wrapped") from e
        except RuntimeError as outer:
            self.assertIs(gap_in(outer), gap)
        try:
            try:
                raise gap
            except AttributeError:
                raise ValueError("while handling")
        except ValueError as outer:
            self.assertIs(gap_in(outer), gap)
        self.assertIsNone(gap_in(ValueError("no gap")))
        self.assertIsNone(gap_in(None))

    def test_fatal_names_the_standin_the_name_and_the_engine_frame(self):
        class Obj:
            def __getattr__(self, name):
                raise StandInGap("the TP group", name, "only all_gather is modelled")

        try:
            _engine_code(Obj())
        except StandInGap as g:
            text = str(gap_fatal(g, "capturing for rank (dp 0, tp 1)"))
        self.assertIn("stand-in gap (r3check's, not a verdict on the engine)", text)
        self.assertIn("r3check's stand-in for the TP group has no 'missing' (only all_gather is modelled)", text)
        self.assertIn("errors_test.py:", text)
        self.assertIn("capturing for rank (dp 0, tp 1)", text)
        self.assertNotIn("\n", text)

    def test_what_an_old_torch_lacks_is_told_from_the_engines_errors(self):
        import torch

        try:
            try:
                torch.zeros(1).dtype.r3check_missing
            except AttributeError as e:
                raise RuntimeError("wrapped") from e
        except RuntimeError as outer:
            lack = torch_lack_in(outer)
        old = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < OLD_TORCH
        if old:
            self.assertIsNotNone(lack)
            text = torch_lack_text(lack, "building the capturer")
            self.assertIn(f"this torch ({torch.__version__}) has no torch.dtype.r3check_missing", text)
            self.assertIn("errors_test.py:", text)
        else:
            self.assertIsNone(lack)  # on a newer torch it is the engine's error
        try:
            _engine_code(object())
        except AttributeError as e:
            self.assertIsNone(torch_lack_in(e))  # not a torch object
        self.assertIsNone(torch_lack_in(StandInGap("x", "y")))

    def test_one_line_texts(self):
        self.assertEqual(one_line("  first\nsecond "), "first")
        self.assertEqual(exc_text(ValueError("a\nb")), "ValueError: a")
        self.assertEqual(exc_text(KeyError()), "KeyError")
        long = one_line("x" * 5000 + "\nsecond")  # an engine's huge message stays well under the line cap
        self.assertEqual((len(long), long[-3:]), (400, "..."))


if __name__ == "__main__":
    unittest.main()
