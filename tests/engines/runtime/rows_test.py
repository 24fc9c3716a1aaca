"""r3runtime.rows: what is encoded decodes back to its run list, whatever
the dtype and base; padding and foreign values are told apart."""
import unittest

import _path  # noqa: F401
import torch
from r3runtime import rows


def case(N, rank_rows, T=1, layers=1):
    D = len(N)
    return rows.Case(0, {"dp": D, "tp": T, "max_num_batched_tokens": max(N + [1]) * 2, "num_experts": 256,
                         "num_layers": layers, "num_tokens_across_dp": N,
                         "ranks": [{"dp": r // T, "tp": r % T, "rows": rank_rows} for r in range(D * T)]})


class RowsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rows.init_dtype_tables()

    def roundtrip(self, c, runs_json, dtype, B=None):
        runs = c.runs[0]
        B = B or rows.base_for(dtype)
        x = c.encoded(runs, B, torch.device("cpu"))
        buf = torch.zeros((64, c.nl, rows.ENCODING_WIDTH), dtype=dtype)
        n = x.shape[0]
        buf[:n, c.layer] = x.to(dtype)
        got, stray, undec = rows.decode(buf, c, [], B)
        self.assertEqual((rows.runs_json(got), stray, undec), (runs_json, 0, 0))

    def test_roundtrip_over_dtypes_and_bases(self):
        runs = [{"dp": 0, "from": 1, "count": 4}, {"pad": 2}, {"dp": 1, "from": 0, "count": 3}]
        c = case([5, 3], runs)
        for dtype in (torch.uint8, torch.int16, torch.int32, torch.int64):
            self.roundtrip(c, runs, dtype)
        self.roundtrip(c, runs, torch.int32, B=rows.REPLAY_DTYPE_BASE)  # through the int16 replay buffer

    def test_values_beyond_one_digit(self):
        runs = [{"dp": 1, "from": 290, "count": 5}]
        self.roundtrip(case([300, 300], runs), runs, torch.uint8)

    def test_float_buffers_hold_every_digit_exactly(self):
        # Values 3001-3005: a digit above 2048 would not survive float16 (nor
        # one above 256 bfloat16), so each float dtype's base must keep below.
        runs = [{"dp": 1, "from": 0, "count": 5}]
        c = case([3000, 10], runs)
        for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
            self.roundtrip(c, runs, dtype)

    def test_stray_and_undecodable(self):
        c = case([4], [{"dp": 0, "from": 0, "count": 4}], layers=2)
        x = c.encoded(c.runs[0], 256, torch.device("cpu"))
        buf = torch.zeros((8, 2, rows.ENCODING_WIDTH), dtype=torch.uint8)
        buf[:4, 1] = x.to(torch.uint8)
        buf[6, 1, 0] = 1  # past the prefix
        buf[0, 0, 0] = 1  # another layer
        buf[1, 1, 7] = 200  # a digit no value of this case has
        got, stray, undec = rows.decode(buf, c, [], 256)
        self.assertEqual((stray, undec), (2, 1))
        self.assertEqual(rows.runs_json(got), [{"dp": 0, "from": 0, "count": 1}, {"dp": 0, "from": 2, "count": 2}])

    def test_usual_captures_skip_the_digit_by_digit_decode(self):
        # A capture of consecutive tokens is matched against the value table,
        # one equal to a slice of a candidate (the rank's input) against it:
        # neither needs the full decode, which is what keeps a rank-capture
        # fast. Values past one digit check that the first row's value is read
        # from all its digits.
        def no_full_decode(B, maxv):
            raise AssertionError("decoded digit by digit")

        full = rows._ndigits
        rows._ndigits = no_full_decode
        try:
            consecutive = [{"dp": 1, "from": 290, "count": 5}]
            self.roundtrip(case([300, 300], consecutive), consecutive, torch.uint8)
            runs = [{"dp": 0, "from": 1, "count": 4}, {"pad": 2}, {"dp": 1, "from": 0, "count": 3}]
            c = case([300, 3], runs)
            x = c.encoded(c.runs[0], 256, torch.device("cpu")).to(torch.uint8)
            buf = torch.zeros((64, c.nl, rows.ENCODING_WIDTH), dtype=torch.uint8)
            buf[:x.shape[0], c.layer] = x
            got, stray, undec = rows.decode(buf, c, [(lambda dtype: x.to(dtype), c.runs[0])], 256)
            self.assertEqual((rows.runs_json(got), stray, undec), (runs, 0, 0))
        finally:
            rows._ndigits = full

    def test_same_compares_shape_dtype_and_values(self):
        # _same() tells TP ranks' captures apart; its 8-byte-word fast path
        # must not equate tensors of other shapes or values.
        a = torch.zeros(2, 4, dtype=torch.int32)
        self.assertTrue(rows._same(a, a.clone()))
        self.assertFalse(rows._same(torch.zeros(2, 3), torch.zeros(3, 2)))  # same numel, other shape
        self.assertFalse(rows._same(a, torch.zeros(2, 2, dtype=torch.int32)))
        b = a.clone()
        b[1, 3] = 1
        self.assertFalse(rows._same(a, b))  # the fast path's words see the last element too
        c = torch.zeros(2, 3, dtype=torch.int16)  # 6 bytes a row: no word view
        d = c.clone()
        d[0, 2] = 7
        self.assertTrue(rows._same(c, c.clone()))
        self.assertFalse(rows._same(c, d))

    def test_malformed_cases_are_fatal(self):
        with self.assertRaises(rows.Fatal):
            case([2], [{"dp": 0, "from": 1, "count": 2}])  # outside N[0]
        with self.assertRaises(rows.Fatal):
            rows.Case(3, {"dp": 1})


if __name__ == "__main__":
    unittest.main()
