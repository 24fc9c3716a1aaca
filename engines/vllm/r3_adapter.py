#!/usr/bin/env python3
"""r3check engine adapter for vLLM's routed-experts capturer (protocol 1).

  python3 engines/vllm/r3_adapter.py --source PATH|installed [--device cpu|cuda] [--sizing FILE]
  torchrun --nproc-per-node N engines/vllm/r3_adapter.py --source PATH --device cuda

Runs vLLM's own `RoutedExpertsCapturer.capture()` (and, when it finds it,
vLLM's own replay-buffer sizing) on the rows r3check sends and reports what
it wrote. The protocol is docs/engines.md; pointing the adapter at a
checkout, a single file or an installed vLLM is engines/vllm/README.md.
Everything engine-independent is engines/runtime/r3runtime; the vLLM parts
are r3_vllm/ beside this file. Nothing of vLLM is copied here.
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
        from r3_vllm.binding import VllmBinding  # imports torch: only once main has checked it

        return VllmBinding

    sys.exit(main.run("vllm", binding, _stdio, ADAPTER_DIRS))
