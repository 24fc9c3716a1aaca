"""The vllm-ascend binding of r3runtime: vLLM's binding (r3_vllm) driving
the capturer vllm-ascend's file leaves behind. The kernel's rows come from
r3check by the case's communication type (moe_comm: docs/layouts.md); the
capture reads it through _EXTRA_CTX.moe_comm_type, and its
torch.distributed.all_gather over the TP group's device_group is the TP
group's collective (emulated in one process, real under torchrun)."""
import pathlib

from r3runtime import torch_compat, tp
from r3runtime.errors import Fatal
from r3_ascend import loader
from r3_vllm import binding as vllm_binding
from r3_vllm import loader as vllm_loader
from r3_vllm.interfaces import Interface

ADAPTER_DIRS = (str(pathlib.Path(__file__).resolve().parents[1]),) + vllm_binding.ADAPTER_DIRS


class AscendBinding(vllm_binding.VllmBinding):
    name = "vllm-ascend"
    ADAPTER_DIRS = ADAPTER_DIRS

    @classmethod
    def add_arguments(cls, parser):
        parser.add_argument("--base", required=True,
                            help="the vLLM capturer vllm-ascend patches: a vLLM checkout, its "
                                 "routed_experts_capturer.py, or 'installed'")

    def __init__(self, args):
        args.sizing = None  # vllm-ascend's kernels take no vLLM replay buffer
        super().__init__(args)

    def set_device(self, device):
        super().set_device(device)
        # vllm-ascend's device is the NPU ("npu" in its early files): here
        # the run's device, which the hello's device map says.
        torch_compat.map_kind_to("npu", device)

    def load(self):
        patched = loader.load(self.args.source, self.args.base)
        self.iface = Interface(patched.base.module, patched.cls)
        if self.iface.device_cache is not None:
            raise Fatal(f"--base {patched.base.path}: the device-cache design; vllm-ascend's files patch "
                        "the capturer with a device buffer, which this base does not have")
        tp.install_list_gather()
        vllm_loader.go_live_now()
        base = patched.base
        return {"engine": "vllm-ascend", "source": str(patched.loaded.path), "sha256": patched.loaded.sha256(),
                "engine_version": patched.loaded.version,
                "interface": f"{patched.how}, over vLLM's {self.iface.description} "
                             f"({base.path.name}, sha256 {base.sha256()[:12]})",
                "sizing": None}
