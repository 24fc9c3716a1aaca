#!/usr/bin/env python3
"""r3check engine adapter for SGLang's routed-experts capturer (protocol 1).

  python3 engines/sglang/r3_adapter.py --source PATH|installed [--device cpu|cuda]

Runs SGLang's own capturer on the rows r3check sends, the way a forward
step does: create() builds it (the device buffer sized by SGLang's own
code), capture() writes what the TopK layer saw (the DP-gathered batch),
on_forward_end() slices this DP rank's rows and copies them to the host
cache. The host cache is what r3check reads back and judges. The protocol is
docs/engines.md; what is stood in for is engines/sglang/README.md.
Everything engine-independent is engines/runtime/r3runtime. Nothing of
SGLang is copied here.
"""
import pathlib
import sys

_HERE = pathlib.Path(__file__).resolve().parent
ADAPTER_DIRS = (str(_HERE),)

if __name__ == "__main__":
    sys.path[:0] = [str(_HERE.parent / "runtime"), str(_HERE)]
    from r3runtime import hygiene

    _stdio = hygiene.take_stdio()  # before anything can print
    from r3runtime import main

    def binding():
        from r3_sglang.binding import SglangBinding  # imports torch: only once main has checked it

        return SglangBinding

    sys.exit(main.run("sglang", binding, _stdio, ADAPTER_DIRS))
