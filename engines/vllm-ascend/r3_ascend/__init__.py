"""vllm-ascend's binding of r3runtime (engines/vllm-ascend/README.md).

It reuses the vLLM binding (r3_vllm): vllm-ascend patches vLLM's capturer.
"""
