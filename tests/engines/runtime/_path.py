"""Puts engines/runtime on sys.path, as an adapter's entry script does."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "engines" / "runtime"))
