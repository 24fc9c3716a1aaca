#!/usr/bin/env python3
"""Runs every r3runtime unit test; exit 77 (skip) where torch cannot be imported."""
import pathlib
import sys
import unittest

try:
    import torch  # noqa: F401
except Exception:
    print("torch cannot be imported: skipping")
    sys.exit(77)
here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here))
suite = unittest.defaultTestLoader.discover(str(here), pattern="*_test.py")
result = unittest.TextTestRunner(verbosity=1).run(suite)
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
