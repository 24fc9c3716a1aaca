"""An adapter's start-up: arguments, torch, devices and torchrun, loading
the engine's code through its binding, the hello, then the protocol loop.

A binding class (engines/NAME/) provides, besides capture_engine's calls:

  add_arguments(parser)      classmethod: its own flags (besides --source, --device)
  Binding(args)              from the parsed arguments
  set_device(device)         where buffers live (the platform stand-in reads it)
  load() -> dict             loads the engine's code; the hello's engine, source, sha256,
                             engine_version, interface (and sizing) fields; raises Fatal
  probe(engine)              builds one capturer, so an undrivable constructor is a fatal
                             before any case
  close()                    removes what the engine left (shared memory, lock files)
"""
import argparse
import contextlib
import gc
import logging
import os
import signal
import sys

from r3runtime import hygiene
from r3runtime.errors import Fatal, one_line

log = logging.getLogger("r3runtime")


def run(name, load_binding, stdio, adapter_dirs=(), argv=None):
    """Runs an adapter; returns its exit status. load_binding() returns the
    binding class; it is called once torch has been imported."""
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("R3_ADAPTER_LOG", "WARNING"),
                        format="r3_adapter: %(levelname)s %(name)s: %(message)s")
    usage = f"{name} adapter: --source PATH|installed [--device cpu|cuda]"

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise Fatal(f"usage: {message} ({usage})")

    parser = Parser(description=f"r3check engine adapter for {name} (protocol 1)")
    parser.add_argument("--source", required=True, help="the engine's checkout, capture file, or 'installed'")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--protocol-node", action="store_true",
                        help="under torchrun: this node's first process speaks the protocol (r3check adds it)")
    adapter = None
    binding = None
    engine = None
    rc = 1
    # r3check stops a hung adapter with SIGTERM: unwind, so that the engine's
    # shared memory and lock files are removed (binding.close()).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    torchrun = int(os.environ.get("WORLD_SIZE", "1")) > 1 or "RANK" in os.environ
    try:
        try:
            try:
                import torch
                import torch.distributed  # noqa: F401
            except Exception as e:
                raise Fatal(f"cannot import torch with {sys.executable}: {type(e).__name__}: {one_line(e)}")
            from r3runtime import capture_engine, dist, protocol, rows, torch_compat

            binding_cls = load_binding()
            binding_cls.add_arguments(parser)
            args = parser.parse_args(argv)

            adapter = protocol.Adapter(stdio, adapter_dirs)
            # Capture tensors are small: intra-op threads only add overhead
            # (and spin on big hosts). R3_ADAPTER_THREADS overrides.
            torch.set_num_threads(int(os.environ.get("R3_ADAPTER_THREADS", "1")))
            rows.init_dtype_tables()
            if args.device == "cuda" and not torch.cuda.is_available():
                raise Fatal("--device cuda: torch sees no CUDA device")
            if torchrun:
                adapter.dist = dist.Dist(args.device, args.protocol_node)
                device = adapter.dist.device
                world, rank, backend = adapter.dist.world, adapter.dist.rank, adapter.dist.backend
                if rank != adapter.dist.root:
                    adapter.stdio = None
            else:
                device = torch.device("cuda", 0) if args.device == "cuda" else torch.device("cpu")
                if args.device == "cuda":
                    torch.cuda.set_device(device)
                world, rank, backend = 1, 0, "none"
            torch_compat.install()
            if device.type == "cpu" and not torch.cuda.is_available():
                torch_compat.map_cuda_to(device)
            load_error = None
            try:
                binding = binding_cls(args)
                binding.set_device(device)
                info = binding.load()
                engine = capture_engine.CaptureEngine(binding, device, rank)
                binding.probe(engine)
            except Fatal as f:
                load_error = str(f)
            if adapter.dist is not None:
                errors = [e for e in adapter.dist.all_gather_obj(load_error) if e]
                if errors:
                    raise Fatal(errors[0])
            elif load_error:
                raise Fatal(load_error)
            adapter.engine = engine
            adapter.hello = {"type": "hello", "protocol": protocol.PROTOCOL, **info, "device": device.type,
                             "world_size": world, "backend": backend}
            mapped = torch_compat.device_map()
            if mapped:
                adapter.hello["device_map"] = mapped
            standins = torch_compat.dtype_map()
            if standins:
                adapter.hello["dtype_map"] = standins
            # What start-up made (torch, the engine's modules, the stand-ins)
            # lives as long as the process: in the collector's permanent
            # generation the requests' collections do not walk it (13 % of a
            # request's time before; the fork server does the same for what
            # it imported).
            gc.collect()
            gc.freeze()
            rc = adapter.loop()
        except Fatal as f:
            msg = one_line(f) or "fatal error"
            log.error("%s", msg)
            if stdio is not None and (adapter is None or adapter.is_root()):
                try:
                    stdio.writer.write(_fatal_line(msg))
                    stdio.writer.flush()
                except OSError:
                    pass
                hygiene.drain_stdin(stdio, 0.2)
            rc = 1
        except BrokenPipeError:
            rc = 1
    finally:
        if engine is not None:
            engine.close()
        if binding is not None:
            with contextlib.suppress(Exception):
                binding.close()
        if adapter is not None and adapter.dist is not None and rc == 0:
            with contextlib.suppress(Exception):
                import torch.distributed as td

                td.destroy_process_group()
    return rc


def _fatal_line(msg):
    import json

    return json.dumps({"type": "fatal", "error": msg}, ensure_ascii=False).encode("utf-16", "surrogatepass").decode(
        "utf-16", "replace") + "\n"
