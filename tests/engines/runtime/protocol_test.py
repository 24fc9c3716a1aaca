"""r3runtime.protocol and tp: replies are valid JSON whatever the engine's
text; groups whose world r3check does not model are gaps, not errors."""
import json
import unittest

import _path  # noqa: F401
import torch
from r3runtime.errors import StandInGap
from r3runtime.protocol import dumps
from r3runtime.tp import SimpleGroup


class ProtocolTest(unittest.TestCase):
    def test_lone_surrogates_become_replacement_characters(self):
        line = dumps({"message": "bad \udc80 and \ud800 end"})
        self.assertTrue(line.endswith("\n") and line.count("\n") == 1)
        line.encode("utf-8")  # encodable: no surrogates left
        self.assertEqual(json.loads(line)["message"], "bad \ufffd and \ufffd end")

    def test_processes_without_the_protocol_stdio_send_nothing(self):
        # torchrun's other processes have no protocol stream: their sends are
        # dropped, not written to a stdout r3check does not read.
        from r3runtime.protocol import Adapter

        Adapter(stdio=None).send({"type": "result", "id": 1})  # no AttributeError
        written = []
        stdio = type("Stdio", (), {})()
        stdio.writer = type("W", (), {"write": lambda self, t: written.append(t), "flush": lambda self: None})()
        Adapter(stdio=stdio).send({"type": "result", "id": 1})
        self.assertEqual([json.loads(t) for t in written], [{"type": "result", "id": 1}])

    def test_groups_of_one_pass_through_and_others_are_gaps(self):
        x = torch.ones(2, 2)
        alone = SimpleGroup(1, 0, 0, "dp")
        self.assertIs(alone.all_reduce(x), x)
        self.assertIs(alone.all_gather(x), x)
        wide = SimpleGroup(2, 1, 0, "dp")
        with self.assertRaises(StandInGap) as e:
            wide.all_reduce(x)
        self.assertIn("dp group", str(e.exception))
        with self.assertRaises(StandInGap):
            wide.all_gather(x)
        self.assertEqual((wide.rank_in_group, wide.is_last_rank, wide.ranks), (1, True, [0, 1]))


if __name__ == "__main__":
    unittest.main()
