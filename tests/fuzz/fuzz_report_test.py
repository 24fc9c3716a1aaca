"""scripts/fuzz_report.py: what an overnight run's report.json and
report.svg say, from a progress log written by hand (the driver test runs
the real thing; this one pins every field and coordinate)."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "fuzz_report.py"

# t, execs, cov, ft, corpus, exec/s, findings (one row per libFuzzer status line)
PROGRESS = """0 0 10 20 1 0 0
10 1000 40 80 5 100 0
20 3000 50 100 10 200 1
"""


class FuzzReportTest(unittest.TestCase):
    def setUp(self):
        self.state = tempfile.mkdtemp()
        with open(os.path.join(self.state, "progress.tsv"), "w") as f:
            f.write(PROGRESS)
        subprocess.run([sys.executable, str(SCRIPT), self.state, "layout", "60", "3", "9",
                        "crash-1", ""], check=True)

    def test_the_json_report_holds_the_night(self):
        with open(os.path.join(self.state, "report.json")) as f:
            r = json.load(f)
        self.assertEqual((r["target"], r["seconds"], r["execs"], r["parts"]), ("layout", 60, 3000, 1))
        self.assertEqual(r["coverage"], {"cov": 50, "ft": 100})
        self.assertEqual(r["corpus"], {"before": 3, "after": 9, "fuzzer_corpus": 10})
        self.assertEqual(r["findings"], ["crash-1"])
        self.assertEqual(r["timeline"][1], {"t": 10, "execs": 1000, "exec_per_s": 100, "cov": 40, "ft": 80,
                                            "corpus": 5, "findings": 0})
        self.assertEqual(len(r["timeline"]), 3)
        self.assertEqual(r["exec_per_s_median"], 100)  # of 0, 100, 200

    def test_the_picture_plots_coverage_and_corpus_over_time(self):
        with open(os.path.join(self.state, "report.svg")) as f:
            svg = f.read()
        # x: 70 + 600 t / 20; coverage y: 60 + 150 - 150 cov / 50; corpus y: 270 + 150 - 150 c / 10
        for line in (
            '<text x="10" y="20" font-size="15">fuzz-overnight layout: 60 s, 3000 execs, 1 findings</text>',
            '<text x="10" y="52" font-size="13">coverage (cov) (max 50)</text>',
            '<rect x="70" y="60" width="600" height="150" fill="none" stroke="#999"/>',
            '<text x="66" y="70" font-size="11" text-anchor="end">50</text>',
            '<text x="66" y="210" font-size="11" text-anchor="end">0</text>',
            'stroke="#1f77b4" stroke-width="2" points="70.0,180.0 370.0,90.0 670.0,60.0"/>',
            '<text x="10" y="262" font-size="13">corpus size (max 10)</text>',
            'stroke="#2ca02c" stroke-width="2" points="70.0,405.0 370.0,345.0 670.0,270.0"/>',
            '<text x="370" y="445" font-size="12" text-anchor="middle">seconds (0 to 20)</text>',
        ):
            self.assertIn(line, svg)


class EmptyNightTest(unittest.TestCase):
    def test_a_night_with_no_status_line_is_an_empty_report_on_unit_axes(self):
        state = tempfile.mkdtemp()
        open(os.path.join(state, "progress.tsv"), "w").close()
        subprocess.run([sys.executable, str(SCRIPT), state, "parser", "5", "0", "0"], check=True)
        with open(os.path.join(state, "report.json")) as f:
            r = json.load(f)
        self.assertEqual((r["execs"], r["parts"], r["timeline"], r["exec_per_s_median"], r["findings"]),
                         (0, 1, [], 0, []))
        with open(os.path.join(state, "report.svg")) as f:
            svg = f.read()
        self.assertIn("coverage (cov) (max 1)", svg)
        self.assertIn("corpus size (max 1)", svg)
        self.assertIn("seconds (0 to 1)", svg)
        self.assertNotIn("<polyline", svg)

if __name__ == "__main__":
    unittest.main()
