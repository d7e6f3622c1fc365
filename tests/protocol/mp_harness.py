# Drives firmware/lib/wire.py from line commands on stdin, one JSON line out per command.
# Runs under the real `micropython` (heap 64k) and, unchanged, under CPython. Many
# examples go through one process so the cross-interpreter tests stay fast.
#
#   K <key hex> <serial>                      set the key and the shoe serial
#   D <name> <host|shoe> <boot> <seq>         feed a stream to a fresh receiver, given by
#   C <hex>                                   the chunk lines that follow (each fed as it
#   .                                         comes, so the heap never holds the stream)
#   E <mtype> <flags> <boot> <seq> <hex>      encode one frame
#   P <mtype> <arg> ...                       pack a shoe payload (x<hex> is a bytes arg)
#   S <mtype> <flags> <boot> <seq> <arg> ...  pack a shoe payload and encode its frame
import sys
import json
import binascii

import payloads
import wire

PACKERS = {
    wire.HELLO: payloads.pack_hello,
    wire.CARD: payloads.pack_card,
    wire.UNREAD: payloads.pack_unread,
    wire.DECK_STATUS: payloads.pack_deck_status,
    wire.FAULT: payloads.pack_fault,
    wire.KEY: payloads.pack_key,
    wire.HEARTBEAT: payloads.pack_heartbeat,
    wire.REPLY: payloads.pack_reply,
    wire.CRASH: payloads.pack_crash,
}
HEADER_KNOWN = (wire.BAD_VERSION, wire.BAD_FLAGS, wire.UNKNOWN_SHOE, wire.BAD_TAG,
                wire.BAD_DIRECTION, wire.REPLAY, wire.UNKNOWN_TYPE, wire.BAD_PAYLOAD)


def hexs(b):
    return binascii.hexlify(b).decode()


def fields(mtype, p):
    # The host-to-shoe payloads through the firmware's own readers.
    if mtype == wire.ACK:
        return list(payloads.unpack_ack(p))
    if mtype == wire.RESEND_FROM:
        return list(payloads.unpack_resend_from(p))
    if mtype == wire.NEW_SHOE:
        head = list(payloads.unpack_new_shoe(p))
        return head[:5] + [[[code, hexs(uid)] for code, uid in payloads.manifest_entries(p)]]
    if mtype == wire.CONFIG:
        return list(payloads.unpack_config(p))
    if mtype == wire.TIME:
        return [payloads.unpack_time(p)]
    if mtype == wire.PING:
        return [payloads.unpack_ping(p)]
    if mtype == wire.MAINTENANCE:
        # Read from the payload, not the constant: the magic is what the receiver checked.
        return [payloads.unpack_ping(p)]
    if mtype == wire.CLEAR:
        return list(payloads.unpack_clear(p))
    if mtype == wire.CARDS_FROM:
        return list(payloads.unpack_cards_from(p))
    return None


key = bytes(32)
serial = 0
out = bytearray(wire.OUT_SIZE)
pbuf = bytearray(wire.MAX_PAYLOAD)
while True:
    line = sys.stdin.readline()
    if not line:
        break
    parts = line.split()
    if not parts:
        continue
    cmd = parts[0]
    if cmd == "K":
        key = binascii.unhexlify(parts[1])
        serial = int(parts[2])
        print(json.dumps("ok"))
    elif cmd == "D":
        rx = wire.Receiver(key, serial, int(parts[3]), int(parts[4]), parts[2] == "host")
        if len(rx._buf) != wire.MAX_ENCODED:
            raise RuntimeError("receiver buffer is not MAX_ENCODED bytes")
        # Results are written as they come, so a long stream needs no heap for them.
        sys.stdout.write('{"name": ' + json.dumps(parts[1]) + ', "results": [')
        first = True
        while True:
            chunk = sys.stdin.readline().split()
            if chunk[0] == ".":
                break
            for r in rx.feed(binascii.unhexlify(chunk[1]) if len(chunk) > 1 else b""):
                if r == wire.OK:
                    item = [r, rx.mtype, rx.flags, rx.boot, rx.seq, hexs(rx.payload),
                            fields(rx.mtype, rx.payload)]
                elif r in HEADER_KNOWN:
                    item = [r, rx.mtype, rx.flags, rx.boot, rx.seq]
                else:
                    item = [r]
                if rx.buffered > wire.MAX_ENCODED:
                    raise RuntimeError("receiver buffer above MAX_ENCODED")
                sys.stdout.write(("" if first else ", ") + json.dumps(item))
                first = False
        print('], ' + json.dumps({"buffered": rx.buffered, "high_water": rx.high_water,
                                  "window": [rx.last_boot, rx.last_seq]})[1:])
    elif cmd == "E":
        enc = wire.Encoder(key, serial)
        payload = binascii.unhexlify(parts[5]) if len(parts) > 5 else b""
        n = enc.encode(int(parts[1]), int(parts[2]), int(parts[3]), int(parts[4]), payload, out)
        print(json.dumps(hexs(out[:n])))
    elif cmd == "P":
        args = []
        for a in parts[2:]:
            args.append(binascii.unhexlify(a[1:]) if a[0] == "x" else int(a))
        n = PACKERS[int(parts[1])](pbuf, *args)
        print(json.dumps(hexs(pbuf[:n])))
    elif cmd == "S":
        args = []
        for a in parts[5:]:
            args.append(binascii.unhexlify(a[1:]) if a[0] == "x" else int(a))
        n = PACKERS[int(parts[1])](pbuf, *args)
        enc = wire.Encoder(key, serial)
        m = enc.encode(int(parts[1]), int(parts[2]), int(parts[3]), int(parts[4]), pbuf, out, n)
        print(json.dumps(hexs(out[:m])))
    else:
        raise ValueError("unknown command " + cmd)
