#!/usr/bin/env python3
"""r3check engine adapter for vllm-ascend's routed-experts capture (protocol 1).

  python3 engines/vllm-ascend/r3_adapter.py --source PATH|installed --base PATH|installed [--device cpu|cuda]

vllm-ascend replaces vLLM's RoutedExpertsCapturer.capture (or subclasses
the class) when its patch module is imported. This adapter loads vLLM's
capturer from --base, then vllm-ascend's file from --source over it, and
drives the result the way the vLLM adapter drives vLLM's: the capturer
built through vLLM's own initialisation, capture() called with the rows the
MoE kernel sees under the case's communication type (moe_comm), the buffer
read back and judged. The protocol is docs/engines.md; what is stood in for
is engines/vllm-ascend/README.md. Nothing of vllm-ascend is copied here.
"""
import pathlib
import sys

_HERE = pathlib.Path(__file__).resolve().parent
ADAPTER_DIRS = (str(_HERE), str(_HERE.parent / "vllm"))

if __name__ == "__main__":
    sys.path[:0] = [str(_HERE.parent / "runtime"), str(_HERE.parent / "vllm"), str(_HERE)]
    from r3runtime import hygiene

    _stdio = hygiene.take_stdio()  # before anything can print
    from r3runtime import main

    def binding():
        from r3_ascend.binding import AscendBinding  # imports torch: only once main has checked it

        return AscendBinding

    sys.exit(main.run("vllm-ascend", binding, _stdio, ADAPTER_DIRS))
