"""The rank a capture runs as, which the stand-ins read, and the private
control flow of the TP emulation.

The control-flow exceptions are BaseException subclasses, so that an
engine's `except Exception` cannot swallow them.
"""


class Current:
    case = None  # rows.Case
    d = 0
    t = 0
    group = None  # the TP group stand-in of the running rank
    config = None  # the config of the running rank's capturer

    def enter(self, case, d, t, group=None):
        self.case, self.d, self.t, self.group = case, d, t, group


CUR = Current()


class GatherStop(BaseException):
    """Emulation pass k: this TP rank reached all-gather round k."""

    def __init__(self, tensor, uneven=False):
        super().__init__("gather stop")
        self.tensor = tensor
        # torch.distributed.all_gather into a list: each rank's tensor may
        # have its own number of rows (NCCL's uneven all-gather).
        self.uneven = uneven


class RankAbort(BaseException):
    """The capture must stop with an adapter-made error (hang, mismatch)."""

    def __init__(self, etype, message):
        super().__init__(message)
        self.etype = etype
        self.message = message
