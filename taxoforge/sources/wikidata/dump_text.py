r"""The texts the dump scanner found: byte spans of a block gathered into Arrow string buffers,
N-Triples escapes decoded on the way (compiled, no Python per name).

:func:`gather_spans` copies each span with libc's ``memcpy``; a span the scanner marked as
holding a backslash is decoded as :func:`.ntriples.unescape` decodes it (``\t \b \n \r \f \"
\' \\``, ``\uXXXX`` and ``\UXXXXXXXX`` to UTF-8) and flagged when an escape is unknown or no
Unicode character, so that Python words the message of those few only. Before, every escaped
name went through ``re.sub`` in Python while holding the GIL: on a Wikidata-shaped file about
600 names a block, most of a block's time outside the scanner.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from taxoforge.trees.graph_kernels import compiled

__all__ = ["gather_spans"]

_BSL = 92  # a backslash


@intrinsic
def _memcpy(typingctx, dst, src, size):
    """libc's ``memcpy`` between two addresses."""
    sig = types.void(types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        d, s_, size_ = args
        i8p = ir.IntType(8).as_pointer()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i8p, [i8p, i8p, ir.IntType(64)]),
                                            "memcpy")
        builder.call(fn, [builder.inttoptr(d, i8p), builder.inttoptr(s_, i8p), size_])
        return context.get_dummy_value()

    return sig, codegen


@compiled(inline=True)
def _hex(buf, k, digits):
    """The value of ``digits`` hex digits at ``buf[k:]``, -1 if one is not a hex digit."""
    v = 0
    for j in range(digits):
        c = buf[k + j]
        if 48 <= c <= 57:
            d = c - 48
        elif 65 <= c <= 70:
            d = c - 55
        elif 97 <= c <= 102:
            d = c - 87
        else:
            return -1
        v = v * 16 + d
    return v


@compiled(inline=True)
def _unescape_into(buf, ts, te, data, w):
    """N-Triples escapes of ``buf[ts:te]`` decoded into ``data[w:]`` as UTF-8 (as
    :func:`.ntriples.unescape`); ``(end of the output, ok)``, not ok for an unknown escape or one
    that is not a Unicode scalar value."""
    k = ts
    while k < te:
        c = buf[k]
        if c != _BSL:
            data[w] = c
            w += 1
            k += 1
            continue
        e = buf[k + 1] if k + 1 < te else 0
        cp = -1
        if e == 117 or e == 85:  # \u, \U
            digits = 4 if e == 117 else 8
            if k + 2 + digits > te:
                return w, False
            cp = _hex(buf, k + 2, digits)
            if cp < 0 or cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                return w, False
            k += 2 + digits
        else:
            k += 2
            simple = (116, 98, 110, 114, 102, 34, 39, 92)  # t b n r f " ' \\
            decoded = (9, 8, 10, 13, 12, 34, 39, 92)
            for j in range(8):
                if e == simple[j]:
                    cp = decoded[j]
            if cp < 0:
                return w, False
        if cp < 0x80:
            data[w] = cp
            w += 1
        elif cp < 0x800:
            data[w] = 0xC0 | (cp >> 6)
            data[w + 1] = 0x80 | (cp & 0x3F)
            w += 2
        elif cp < 0x10000:
            data[w] = 0xE0 | (cp >> 12)
            data[w + 1] = 0x80 | ((cp >> 6) & 0x3F)
            data[w + 2] = 0x80 | (cp & 0x3F)
            w += 3
        else:
            data[w] = 0xF0 | (cp >> 18)
            data[w + 1] = 0x80 | ((cp >> 12) & 0x3F)
            data[w + 2] = 0x80 | ((cp >> 6) & 0x3F)
            data[w + 3] = 0x80 | (cp & 0x3F)
            w += 4
    return w, True


@compiled
def gather_spans(buf, start, end, escaped):
    """The byte spans ``buf[start[k]:end[k]]`` laid end to end, the N-Triples escapes of those
    with ``escaped[k]`` decoded (an escape is at least as long as its UTF-8): ``(offsets, data,
    bad)`` — an Arrow string array's buffers, and the spans whose escape is unknown or no
    Unicode character (:func:`.ntriples.unescape` gives their message)."""
    m = start.shape[0]
    offsets = np.empty(m + 1, dtype=np.int64)
    bad = np.zeros(m, dtype=np.bool_)
    offsets[0] = 0
    total = 0
    for k in range(m):
        total += end[k] - start[k]
    data = np.empty(max(1, total), dtype=np.uint8)
    src = np.uint64(buf.ctypes.data)
    dst = np.uint64(data.ctypes.data)
    w = 0
    for k in range(m):
        if escaped[k]:
            w, ok = _unescape_into(buf, start[k], end[k], data, w)
            bad[k] = not ok
        else:
            _memcpy(dst + np.uint64(w), src + np.uint64(start[k]), np.uint64(end[k] - start[k]))
            w += end[k] - start[k]
        offsets[k + 1] = w
    return offsets, data[:w], bad
