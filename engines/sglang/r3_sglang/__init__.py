"""What r3check's SGLang adapter knows of SGLang: the stand-ins for the
sglang.* objects its routed-experts capturer reads (standins), loading the
capturer and its base class from a checkout (loader), and the binding
r3runtime drives (binding)."""
