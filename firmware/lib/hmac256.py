# HMAC-SHA256 (RFC 2104) for MicroPython, which has hashlib.sha256 but no hmac module.
# The padded keys are made once; a digest costs two sha256 objects and no other allocation
# than the two 32-byte digests. Runs unchanged under CPython (the tests compare it with hmac).
import hashlib

_BLOCK = 64


class HMAC256:
    """HMAC-SHA256 with a fixed key.

    HMAC256(key).digest(data) -> 32 bytes; `data` is any buffer (bytes, bytearray, memoryview).
    """

    def __init__(self, key):
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        self._ipad = bytearray(_BLOCK)
        self._opad = bytearray(_BLOCK)
        for i in range(_BLOCK):
            k = key[i] if i < len(key) else 0
            self._ipad[i] = k ^ 0x36
            self._opad[i] = k ^ 0x5C

    def digest(self, data):
        h = hashlib.sha256(self._ipad)
        h.update(data)
        inner = h.digest()
        h = hashlib.sha256(self._opad)
        h.update(inner)
        return h.digest()
