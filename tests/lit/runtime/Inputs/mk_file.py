#!/usr/bin/env python3
"""Reads and damages .mk files with nothing but docs/mk-format.md, the way
another tool would: the header, the section table and zlib's CRC-32.

  mk_file.py list FILE                  one line per section: kind, offset, size, checksum
  mk_file.py flip FILE SECTION OUT      one bit flipped in the middle of SECTION
  mk_file.py truncate FILE BYTES OUT    the first BYTES bytes
  mk_file.py poke FILE OFFSET OUT       one bit flipped at byte OFFSET
"""
import struct
import sys
import zlib

MAGIC = b"MKC\0ARTF"
KINDS = {1: "MANIFEST", 2: "CUBIN", 3: "PTX", 4: "SCHEDULE", 5: "WEIGHTS", 6: "TASKGRAPH"}


def read_sections(data):
    assert data[:8] == MAGIC, "bad magic"
    version, header_bytes, file_bytes, table_offset, count, entry_bytes, table_crc = struct.unpack_from(
        "<IIQQIII", data, 8)
    (header_crc,) = struct.unpack_from("<I", data, 60)
    assert version == 10 and header_bytes == 64 and entry_bytes == 32
    assert header_crc == zlib.crc32(data[:60]), "header checksum"
    table = data[table_offset:table_offset + count * entry_bytes]
    assert table_crc == zlib.crc32(table), "table checksum"
    assert file_bytes == len(data)
    sections = []
    for i in range(count):
        kind, flags, offset, size, crc = struct.unpack_from("<IIQQI", table, i * entry_bytes)
        sections.append((KINDS.get(kind, f"kind {kind}"), offset, size, crc))
    return sections


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    command, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if command == "list":
        for name, offset, size, crc in read_sections(data):
            ok = zlib.crc32(data[offset:offset + size]) == crc
            print(f"{name} offset {offset} size {size} crc {'ok' if ok else 'BAD'}"
                  f"{' page-aligned' if offset % 4096 == 0 else ''}")
    elif command == "flip":
        for name, offset, size, _ in read_sections(data):
            if name == sys.argv[3]:
                assert size > 0, f"{name} is empty"
                data[offset + size // 2] ^= 0x08
        write(sys.argv[4], data)
    elif command == "truncate":
        write(sys.argv[4], data[:int(sys.argv[3])])
    elif command == "poke":
        data[int(sys.argv[3])] ^= 0x01
        write(sys.argv[4], data)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
