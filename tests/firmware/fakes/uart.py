"""A `machine.UART` stand-in for the barcode driver tests (MicroPython and CPython).

`feed(data)` queues bytes as if the module had sent them; `readinto` hands out at most
`chunk` bytes per call (to split lines across reads) and returns None when empty, as
`machine.UART.readinto` does with `timeout=0`. Set `heap_guard` while the test holds
`micropython.heap_lock()`: the fake's own bookkeeping then runs unlocked.
"""

try:
    import micropython as _mp
except ImportError:
    _mp = None


class FakeUART:
    def __init__(self, chunk=64):
        self.pending = bytearray()
        self.chunk = chunk
        self.heap_guard = False
        self.reads = 0

    def feed(self, data):
        self.pending.extend(data)

    def any(self):
        return len(self.pending)

    def readinto(self, buf, nbytes=None):
        if self.heap_guard:
            _mp.heap_unlock()
        try:
            self.reads += 1
            n = min(len(buf), self.chunk, len(self.pending))
            if nbytes is not None:
                n = min(n, nbytes)
            if n == 0:
                return None
            for i in range(n):
                buf[i] = self.pending[i]
            self.pending = self.pending[n:]
            return n
        finally:
            if self.heap_guard:
                _mp.heap_lock()
