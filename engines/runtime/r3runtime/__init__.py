"""r3check's engine-independent adapter runtime (protocol 1, docs/engines.md).

An engine adapter (engines/NAME/) supplies only what is its engine's: the
stand-ins for the modules the engine's capture code imports, how to load that
code, and how to build and call its capturer (an `EngineBinding`, see
capture_engine.py). Everything else lives here:

- hygiene:        the protocol keeps the real stdout; engine code gets stderr and an empty stdin
- errors:         Fatal, StandInGap and the rule that tells r3check's gaps from the engine's errors
- standins:       placeholder modules and objects whose every missing name is a StandInGap
- loading:        an engine file run under its real module name; Loaded (module, path, version)
- torch_compat:   what old torch lacks (custom_op, unsigned dtypes), and the cuda -> cpu device map
- rows:           the row codec: request cases, value encoding, buffer decoding, run lists
- rank:           the rank a capture runs as, and the private control flow of the TP emulation
- tp:             TP groups: emulated in one process, or real torch.distributed collectives
- dist:           torchrun: process groups, object broadcast and gather
- capture_engine: capturers cached per shape and rank; one capture, one DP rank, one case
- protocol:       the request/reply loop
- profile:        R3_ADAPTER_PROFILE=1: time inside the engine's own code, printed at exit
- main:           argument parsing, start-up, probe construction, hello
- zygote:         sweep's fork server: imports torch once, forks each version's adapter
"""
