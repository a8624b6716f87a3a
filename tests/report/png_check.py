#!/usr/bin/env python3
"""Checks a PNG that headless Chromium wrote: its size is WIDTHxHEIGHT and it is not blank.

Usage: png_check.py FILE WIDTH HEIGHT. Standard library only (no PIL on CI): the size comes
from the IHDR chunk; "not blank" means that more than 0.5% of the bytes of the decompressed
image data (filter bytes included) differ from the most common byte, which a page of one
colour never reaches whatever filters the encoder chose.
"""
import struct
import sys
import zlib


def main():
    path, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, size = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if size != (width, height):
        sys.exit(f"{path}: {size[0]}x{size[1]}, expected {width}x{height}")
    pixels = zlib.decompress(idat)
    counts = [0] * 256
    for b in pixels[::7]:  # a sample is enough
        counts[b] += 1
    sampled = sum(counts)
    other = sampled - max(counts)
    if other < 0.005 * sampled:
        sys.exit(f"{path}: blank ({100.0 * other / sampled:.2f}% of the bytes differ from the most common one)")
    print(f"{path}: {width}x{height}, {len(data)} bytes, {100.0 * other / sampled:.1f}% non-background bytes")


if __name__ == "__main__":
    main()
