# r3check test fixture "floor-typo" (tests/engines/vllm-ascend/README.md).
import torch
from vllm.distributed.parallel_state import get_tp_group
from vllm.forward_context import get_forward_context
from vllm.model_executor.layers.fused_moe.routed_experts_capturer import RoutedExpertsCapturer

from vllm_ascend.ascend_forward_context import _EXTRA_CTX, MoECommType

VARIANT = {"order": "n", "floor": "%"}

import pathlib as _pathlib  # noqa: E402

_T = next(p / "patch_template.py" for p in _pathlib.Path(__file__).resolve().parents if (p / "patch_template.py").is_file())
exec(compile(_T.read_text(), str(_T), "exec"))
