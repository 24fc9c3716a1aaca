"""What r3check's vLLM adapter knows of vLLM: the stand-ins for the vllm.*
objects capture and sizing code read (standins), loading that code (loader),
the capturer's constructor interfaces (interfaces), vLLM's replay sizing and
hand-off (sizing), and the binding r3runtime drives (binding)."""
