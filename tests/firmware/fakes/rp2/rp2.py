"""A stand-in `rp2` module: `Flash`, a RAM flash of 4 KiB sectors whose erase and program
run with interrupts off, as rp2_flash.c does (pin edges meanwhile latch in their IRQ
flags, tests/firmware/fakes/pins.py). `during` is called inside each erase with
interrupts off: a test moves a card through the exit beam there while time passes."""

import machine


class Flash:
    def __init__(self, blocks=8):
        self.n = blocks
        self.data = bytearray(4096 * blocks)
        for i in range(len(self.data)):
            self.data[i] = 0xFF
        self.during = None
        self.erases = 0

    def readblocks(self, n, buf, off=0):
        a = n * 4096 + off
        buf[:] = self.data[a : a + len(buf)]

    def writeblocks(self, n, buf, off=None):
        if off is None:
            self.ioctl(6, n)
            off = 0
        state = machine.disable_irq()
        a = n * 4096 + off
        self.data[a : a + len(buf)] = buf
        machine.enable_irq(state)

    def ioctl(self, op, arg):
        if op == 4:
            return self.n
        if op == 5:
            return 4096
        if op == 6:
            state = machine.disable_irq()
            self.erases += 1
            a = arg * 4096
            for i in range(a, a + 4096):
                self.data[i] = 0xFF
            if self.during is not None:
                self.during()
            machine.enable_irq(state)
            return 0
        return 0
