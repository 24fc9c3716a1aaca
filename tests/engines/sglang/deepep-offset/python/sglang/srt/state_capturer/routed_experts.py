# r3check fixture (see tests/engines/sglang/README.md)
import pathlib as _p

VARIANT = {"deepep": "offset"}
exec(open(next(q for q in _p.Path(__file__).resolve().parents if (q / "capturer_template.py").is_file()) / "capturer_template.py").read())
