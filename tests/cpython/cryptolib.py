"""CPython stand-in for MicroPython's `cryptolib`, so firmware/lib/wire.py runs unchanged
under CPython in the tests (the scripted shoes, the codec's CPython leg).

Only what the firmware uses: `aes(key, 1)` (ECB) and `encrypt(src, dst)` of 16-byte blocks,
by the `cryptography` package. Never deployed: the shoe has the real, C, cryptolib.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class aes:  # noqa: N801 - MicroPython's name
    """`cryptolib.aes(key, mode)`: ECB (mode 1) only, as the firmware uses it."""

    def __init__(self, key: bytes, mode: int) -> None:
        if mode != 1:
            raise ValueError("mode")
        self._enc = Cipher(algorithms.AES(bytes(key)), modes.ECB()).encryptor()

    def encrypt(self, src: bytes | bytearray | memoryview, dst: bytearray | memoryview) -> None:
        """Encrypt the whole blocks of `src` into `dst`."""
        dst[: len(src)] = self._enc.update(bytes(src))
