#!/usr/bin/python3
# proto_watch.py: a watch client that is not the simulator's, reading a
# Kubernetes protobuf watch stream by hand from the wire format alone:
# 4-byte big-endian frame lengths, each frame a meta.v1.WatchEvent
# (type = 1, object = 2: a RawExtension, raw = 1) whose raw bytes are a
# "k8s\0" runtime.Unknown (typeMeta = 1 {apiVersion = 1, kind = 2},
# raw = 2) holding the object, whose ObjectMeta (field 1) gives name = 1,
# namespace = 3 and resourceVersion = 6. Field numbers are Kubernetes'
# generated.proto, not the simulator's description.
#
# usage: proto_watch.py URL ACCEPT MAX_EVENTS SECONDS
# prints "Content-Type: ..." then one line per event:
#   TYPE APIVERSION KIND NAMESPACE/NAME RV [reason=R]
# or, for a JSON stream, "JSON TYPE KIND NAMESPACE/NAME" per line.
# Exit status 0 when the stream decoded, 1 with a message when it did not.
import json
import socket
import sys
import urllib.request


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("varint runs past the end at byte %d" % i)
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7


def fields(b):
    """{field number: [values]} of a message; bytes for length-delimited ones."""
    out = {}
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("field %d: length %d past the end" % (num, n))
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d at field %d" % (wt, num))
        out.setdefault(num, []).append(v)
    return out


def one(f, num, default=b""):
    return f.get(num, [default])[0]


def decode_frame(frame):
    we = fields(frame)
    etype = one(we, 1).decode()
    raw = one(fields(one(we, 2)), 1)
    if raw[:4] != b"k8s\0":
        raise ValueError("object without the k8s magic: %r" % raw[:8])
    unk = fields(raw[4:])
    tm = fields(one(unk, 1))
    api_version, kind = one(tm, 1).decode(), one(tm, 2).decode()
    obj = fields(one(unk, 2))
    meta = fields(one(obj, 1))
    line = "%s %s %s %s/%s %s" % (etype, api_version, kind, one(meta, 3).decode(),
                                  one(meta, 1).decode(), one(meta, 6).decode())
    if kind == "Event":
        # core v1 Event: reason = 3; events.k8s.io/v1 Event: reason = 7
        line += " reason=%s" % one(obj, 7 if api_version.startswith("events.k8s.io") else 3).decode()
    return line


def main():
    url, accept, max_events, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    req = urllib.request.Request(url, headers={"Accept": accept})
    try:
        resp = urllib.request.urlopen(req, timeout=seconds)
    except urllib.error.HTTPError as e:
        print("HTTP %d %s" % (e.code, e.headers.get("Content-Type")))
        print(e.read().decode(errors="replace"))
        return 1
    ctype = resp.headers.get("Content-Type", "")
    print("Content-Type: %s" % ctype)
    n = 0
    try:
        if ctype.startswith("application/json"):
            for raw in resp:
                ev = json.loads(raw)
                m = ev["object"].get("metadata", {})
                print("JSON %s %s %s/%s" % (ev["type"], ev["object"].get("kind"),
                                            m.get("namespace", ""), m.get("name", "")))
                n += 1
                if n >= max_events:
                    break
            return 0
        while n < max_events:
            head = resp.read(4)
            if len(head) < 4:
                break
            size = int.from_bytes(head, "big")
            frame = resp.read(size)
            if len(frame) != size:
                print("a frame of %d bytes ended after %d" % (size, len(frame)))
                return 1
            print(decode_frame(frame))
            n += 1
    except (socket.timeout, TimeoutError):
        pass
    except ValueError as e:
        print("undecodable frame %d: %s" % (n + 1, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
