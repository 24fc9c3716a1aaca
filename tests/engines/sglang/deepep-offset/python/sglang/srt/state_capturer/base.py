# r3check fixture (see tests/engines/sglang/README.md)
import pathlib as _p

exec(open(next(q for q in _p.Path(__file__).resolve().parents if (q / "base_template.py").is_file()) / "base_template.py").read())
