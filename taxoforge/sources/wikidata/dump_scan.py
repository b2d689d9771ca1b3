"""The compiled block scanner behind :func:`taxoforge.sources.wikidata.dump.read_dump`.

One call of :func:`scan_block` reads a block of whole N-Triples lines (a read-only
``uint8`` array) once, front to back, in machine code (numba, ``nogil``: blocks are scanned
in parallel threads), and returns what the reader keeps:

* ``wdt:P279`` edges between items, and ``wdt:P31`` edges whose subject is a seed, as
  pairs of QID numbers;
* labels (``rdfs:label``) and aliases (``skos:altLabel``) of items in the wanted
  languages, as (QID number, kind, language index, byte span of the text, has-escape flag,
  line index) — the texts are gathered by :func:`.dump_text.gather_spans`;
* when asked, the values of identifier properties (``wdt:P3151 "55387"``: external ids
  are plain literals) of items, as (QID number, property index, byte span of the value, line
  index);
* the *odd* lines: a line whose predicate is one of those four but which is not in the
  canonical form the scanner takes (an item IRI ``<http://www.wikidata.org/entity/Q…>``
  with 1–18 digits and no leading zero, whitespace ``[ \t]*``, a ``.`` terminator, an
  optional ``\r``; for edges also a trailing ``# comment``). They are rare in Wikidata's
  dumps (non-item objects, blank nodes, comments after labels, malformed or corrupted
  lines); the reader gives them to :func:`.ntriples.classify`, which is where a bad line
  gets its message.

A line's subject and predicate are read from its start (the predicate is recognised by its
last bytes, then compared whole with libc's ``memcmp``); lines with other predicates are
skipped with libc's ``memchr`` to the next newline (SIMD), as are comment and blank lines.
A label is read from the end of its line (``"…"@tag .``), so the text of a name in another
language is never scanned. The scanner counts the block's lines on the way, so a line number
costs nothing when an error is reported. Output arrays are sized to upper bounds (an edge
line has at least 112 bytes, a name line 84), never grown: re-binding arrays in the loop
makes numba count references on every line.

Why compiled code: on a 141 MB Wikidata-shaped file (90 % of its lines used), CPython's
``re.findall`` over the buffer took 1.8 s for the P279 lines and 4.2 s for the labels;
splitting into lines with polars' CSV reader took 0.32 s and its capture-group regex
1.1 s; numpy's newline search alone 0.2 s — each more than the budget of five times
``grep -c P279`` (0.08 s on that file). This scanner reads it in about 0.09 s of one core.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from taxoforge.sources.wikidata.ntriples import MAX_QID_DIGITS, PRED_ALIAS, PRED_ID, PRED_LABEL, PRED_P31, PRED_P279
from taxoforge.trees.graph_kernels import compiled

__all__ = ["scan_block", "encode_langs", "first_nul"]

_ENT = np.frombuffer(b"<http://www.wikidata.org/entity/Q", dtype=np.uint8)
_P279 = np.frombuffer(b"<http://www.wikidata.org/prop/direct/P279>", dtype=np.uint8)
_P31 = np.frombuffer(b"<http://www.wikidata.org/prop/direct/P31>", dtype=np.uint8)
_LABEL = np.frombuffer(b"<http://www.w3.org/2000/01/rdf-schema#label>", dtype=np.uint8)
_ALIAS = np.frombuffer(b"<http://www.w3.org/2004/02/skos/core#altLabel>", dtype=np.uint8)
_DIRECT = np.frombuffer(b"<http://www.wikidata.org/prop/direct/P", dtype=np.uint8)
_N_ENT, _N_P279, _N_P31, _N_LABEL, _N_ALIAS, _N_DIRECT = 33, 42, 41, 44, 46, 38

_NL, _CR, _SP, _TAB, _HASH, _DOT, _QUOTE, _BSL, _AT, _LT, _GT, _DASH = 10, 13, 32, 9, 35, 46, 34, 92, 64, 60, 62, 45
_MAX_DIGITS = MAX_QID_DIGITS  # 10**18 - 1 < 2**63: every accepted QID number fits an int64
_ZERO = np.uint64(0)


def encode_langs(langs: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Wanted language tags (lower case ASCII) as a padded ``uint8`` matrix and their lengths.

    Parameters
    ----------
    langs : tuple[str, ...]
        Wanted language tags, lower case ASCII.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        Wanted language tags (lower case ASCII) as a padded ``uint8`` matrix and their
        lengths.
    """
    width = max([len(t) for t in langs] + [1])
    table = np.zeros((max(1, len(langs)), width), dtype=np.uint8)
    lens = np.zeros(max(1, len(langs)), dtype=np.int64)
    for i, t in enumerate(langs):
        b = t.encode("ascii")
        table[i, : len(b)] = np.frombuffer(b, dtype=np.uint8)
        lens[i] = len(b)
    if not langs:
        lens[0] = -1  # matches nothing
    return table, lens


@intrinsic
def _memchr(typingctx, addr, byte, size):
    """libc's ``memchr`` (SIMD) on an address: the address of the first ``byte``, or 0."""
    sig = types.uint64(types.uint64, types.int64, types.uint64)

    def codegen(context, builder, signature, args):
        a, b, size_ = args
        i8p = ir.IntType(8).as_pointer()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i8p, [i8p, ir.IntType(32), ir.IntType(64)]),
                                            "memchr")
        r = builder.call(fn, [builder.inttoptr(a, i8p), builder.trunc(b, ir.IntType(32)), size_])
        return builder.ptrtoint(r, ir.IntType(64))

    return sig, codegen


@intrinsic
def _memcmp(typingctx, a, b, size):
    """libc's ``memcmp`` on two addresses."""
    sig = types.int32(types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        x, y, size_ = args
        i8p = ir.IntType(8).as_pointer()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), [i8p, i8p, ir.IntType(64)]),
                                            "memcmp")
        return builder.call(fn, [builder.inttoptr(x, i8p), builder.inttoptr(y, i8p), size_])

    return sig, codegen


@compiled
def _eq(buf, i, n, pat):
    m = pat.shape[0]
    if i + m > n:
        return False
    return _memcmp(np.uint64(buf.ctypes.data) + np.uint64(i), np.uint64(pat.ctypes.data), np.uint64(m)) == 0


@compiled
def _ws(c):
    return c == _SP or c == _TAB


@compiled
def _eol(buf, i, n):
    """Index of the first newline at or after ``i`` (``n`` if none)."""
    if i >= n:
        return n
    base = np.uint64(buf.ctypes.data)
    r = _memchr(base + np.uint64(i), _NL, np.uint64(n - i))
    return n if r == _ZERO else np.int64(r - base)


@compiled
def _number(buf, j, n):
    """QID digits at ``j`` (1-18, no leading zero) then ``>``: (number, index after '>') or (-1, j)."""
    if j >= n or buf[j] < 49 or buf[j] > 57:
        return -1, j
    q = 0
    k = j
    while k < n and 48 <= buf[k] <= 57:
        if k - j == _MAX_DIGITS:
            return -1, j
        q = q * 10 + (buf[k] - 48)
        k += 1
    if k >= n or buf[k] != _GT:
        return -1, j
    return q, k + 1


@compiled
def _end_of_statement(buf, i, n):
    """After an object: the index of the line's newline if ``[ \\t]* . [ \\t]* \\r?`` ends the
    line there, ``-2`` if a ``# comment`` follows the dot, ``-1`` if it is not a statement end."""
    while i < n and _ws(buf[i]):
        i += 1
    if i >= n or buf[i] != _DOT:
        return -1
    i += 1
    while i < n and _ws(buf[i]):
        i += 1
    if i >= n or buf[i] == _NL:
        return i
    if buf[i] == _HASH:
        return -2
    if buf[i] == _CR and (i + 1 >= n or buf[i + 1] == _NL):
        return i + 1
    return -1


@compiled
def _id_predicate(buf, j, n, id_props):
    """``PRED_ID + k`` when ``wdt:P<id_props[k]>`` starts at ``j``, else 0: the property's
    digits first, then the whole IRI."""
    k = j + _N_DIRECT
    if k >= n or buf[k - 1] != 80:  # 'P'
        return 0
    num = 0
    while k < n and 48 <= buf[k] <= 57 and k - j < _N_DIRECT + 9:
        num = num * 10 + (buf[k] - 48)
        k += 1
    if k >= n or buf[k] != _GT:
        return 0
    for m in range(id_props.shape[0]):
        if id_props[m] == num:
            if _eq(buf, j, n, _DIRECT):
                return PRED_ID + m
            return 0
    return 0


@compiled
def _predicate(buf, j, n, want_p31, want_names, id_props):
    """Which of the four predicates, or of the identifier properties ``id_props``, starts at
    ``j`` (0 for any other): a check of its last bytes first (most lines have other
    predicates), then of the whole IRI."""
    if j + _N_P31 > n or buf[j] != _LT:
        return 0
    if j + _N_P279 <= n and buf[j + 41] == _GT and buf[j + 40] == 57 and buf[j + 39] == 55:  # ...79>
        if _eq(buf, j, n, _P279):
            return PRED_P279
    if want_p31 and buf[j + 40] == _GT and buf[j + 39] == 49 and buf[j + 38] == 51:  # ...31>
        if _eq(buf, j, n, _P31):
            return PRED_P31
    if want_names:
        if j + _N_LABEL <= n and buf[j + 43] == _GT and buf[j + 42] == 108 and buf[j + 41] == 101:  # ...el>
            if _eq(buf, j, n, _LABEL):
                return PRED_LABEL
        if j + _N_ALIAS <= n and buf[j + 45] == _GT and buf[j + 44] == 108 and buf[j + 43] == 101:
            if _eq(buf, j, n, _ALIAS):
                return PRED_ALIAS
    if id_props.shape[0]:
        return _id_predicate(buf, j, n, id_props)
    return 0


@compiled
def _is_seed(seeds, q):
    k = np.searchsorted(seeds, q)
    return k < seeds.shape[0] and seeds[k] == q


@compiled
def _lang_index(buf, t0, t1, lang_table, lang_lens):
    tl = t1 - t0
    for li in range(lang_lens.shape[0]):
        if lang_lens[li] != tl:
            continue
        same = True
        for m in range(tl):
            c = buf[t0 + m]
            if 65 <= c <= 90:
                c += 32
            if c != lang_table[li, m]:
                same = False
                break
        if same:
            return li
    return -1


_SKIP, _KEEP, _ODD = 0, 1, 2


@compiled(inline=True)
def _skip_ws(buf, i, n):
    while i < n and _ws(buf[i]):
        i += 1
    return i


@compiled(inline=True)
def _subject(buf, i, n):
    """``(QID number or -1, index after the subject)``: an item's number when the subject
    looks like an item IRI (its prefix is checked in full only on lines that are used)."""
    if buf[i] == _LT and i + _N_ENT < n and buf[i + 32] == 81:  # 'Q'
        q, j = _number(buf, i + _N_ENT, n)
        if q >= 0:
            return q, j
    if buf[i] == _LT:  # another IRI (or a corrupted one): to its '>'
        while i < n and buf[i] != _GT and buf[i] != _NL:
            i += 1
        if i < n and buf[i] == _GT:
            i += 1
        return -1, i
    while i < n and not _ws(buf[i]) and buf[i] != _NL and buf[i] != _LT:  # a blank node, or garbage
        i += 1
    return -1, i


@compiled(inline=True)
def _predicate_length(pred, id_lens):
    if pred == PRED_P279:
        return _N_P279
    if pred == PRED_P31:
        return _N_P31
    if pred == PRED_LABEL:
        return _N_LABEL
    if pred == PRED_ALIAS:
        return _N_ALIAS
    return id_lens[pred - PRED_ID]


@compiled(inline=True)
def _id_value(buf, i, n):
    """An identifier line from its object on (``"value" .``, a plain literal without escapes):
    ``(verdict, value start, value end, index of the newline or -1)``."""
    if i >= n or buf[i] != _QUOTE:
        return _ODD, 0, 0, -1
    k = i + 1
    while k < n and buf[k] != _QUOTE and buf[k] != _BSL and buf[k] != _NL and buf[k] != _CR:
        k += 1
    if k >= n or buf[k] != _QUOTE:
        return _ODD, 0, 0, -1
    end = _end_of_statement(buf, k + 1, n)
    if end < 0:
        return _ODD, 0, 0, -1
    return _KEEP, i + 1, k, end


@compiled(inline=True)
def _edge(buf, i, n, q, pred, seeds):
    """An edge line from its object on: ``(verdict, parent, index of the newline or -1)``."""
    if q < 0:
        return _ODD, -1, -1
    if pred == PRED_P31 and not _is_seed(seeds, q):
        return _SKIP, -1, -1  # not a seed's class: not used
    p = -1
    j = i
    if _eq(buf, i, n, _ENT):
        p, j = _number(buf, i + _N_ENT, n)
    end = _end_of_statement(buf, j, n) if p >= 0 else -1
    if end >= 0:
        return _KEEP, p, end
    if end == -2:  # a comment follows the dot
        return _KEEP, p, -1
    return _ODD, -1, -1


@compiled(inline=True)
def _text_ok(buf, ts, te):
    """``(well formed, has an escape)`` of a literal's text ``buf[ts:te]``: no bare quote or
    CR, no escaped closing quote."""
    esc = False
    k = ts
    while k < te:
        c = buf[k]
        if c == _BSL:
            esc = True
            k += 2
            if k > te:
                return False, esc
        elif c == _QUOTE or c == _CR:
            return False, esc
        else:
            k += 1
    return True, esc


@compiled(inline=True)
def _is_tag_char(c):
    return 65 <= c <= 90 or 97 <= c <= 122 or 48 <= c <= 57 or c == _DASH


@compiled(inline=True)
def _name(buf, i, n, lang_table, lang_lens):
    """A label or alias line from its object on, read from the end (``"text"@tag . \r?``):
    ``(verdict, text start, text end, has an escape, language index, index of the newline)``."""
    le = _eol(buf, i, n)
    e = le
    if e > i and buf[e - 1] == _CR:
        e -= 1
    while e > i and _ws(buf[e - 1]):
        e -= 1
    if buf[i] != _QUOTE or e <= i or buf[e - 1] != _DOT:
        return _ODD, 0, 0, False, -1, le  # not a literal, or a comment after the dot, or no dot
    e -= 1
    while e > i and _ws(buf[e - 1]):
        e -= 1
    t1 = e
    while e > i and _is_tag_char(buf[e - 1]):
        e -= 1
    if e == t1 or e - 2 <= i or buf[e - 1] != _AT or buf[e - 2] != _QUOTE:
        return _ODD, 0, 0, False, -1, le
    lang = _lang_index(buf, e, t1, lang_table, lang_lens)
    if lang < 0:
        return _SKIP, 0, 0, False, -1, le  # another language: its text is never read
    ok, esc = _text_ok(buf, i + 1, e - 2)
    if not ok:
        return _ODD, 0, 0, False, -1, le
    return _KEEP, i + 1, e - 2, esc, lang, le


@compiled
def first_nul(buf):
    """Index of the first NUL byte of ``buf`` (binary data: N-Triples text has none), or -1."""
    n = buf.shape[0]
    if n == 0:
        return -1
    base = np.uint64(buf.ctypes.data)
    r = _memchr(base, 0, np.uint64(n))
    return -1 if r == _ZERO else np.int64(r - base)


@compiled
def scan_block(buf, want_p31, seeds, want_names, lang_table, lang_lens, id_props=None):
    """Scan one block of whole lines (module docstring).

    Every line goes through the same steps: whitespace, the subject (:func:`_subject`), the
    predicate (:func:`_predicate`); a line with one of the four predicates then goes to
    :func:`_edge` or :func:`_name` (an identifier property's to :func:`_id_value`), whose
    verdict keeps it, skips it or marks it *odd*.

    Returns ``(n_lines, edge_pred, edge_child, edge_parent, name_q, name_kind, name_lang,
    name_start, name_end, name_escaped, name_line, odd_line, odd_start, odd_end, odd_pred,
    id_q, id_prop, id_start, id_end, id_line)``; ``edge_pred`` is :data:`PRED_P279` or
    :data:`PRED_P31`, ``name_kind`` 0 for a label and 1 for an alias, ``name_lang`` the index
    of the tag in ``lang_table``, ``id_prop`` the index in ``id_props`` (the numbers of the
    identifier properties to keep, ``None`` for none; an odd line of one has ``odd_pred``
    ``PRED_ID`` + that index); line indexes count from 0 at the block's first line."""
    if id_props is None:
        props = np.empty(0, dtype=np.int64)
    else:
        props = id_props
    id_lens = np.empty(props.shape[0], dtype=np.int64)
    for m in range(props.shape[0]):
        digits, x = 1, props[m]
        while x >= 10:
            x //= 10
            digits += 1
        id_lens[m] = _N_DIRECT + digits + 1
    n = buf.shape[0]
    # capacities are upper bounds (no array is re-bound in the loop: that would cost reference
    # counting on every line): an edge line has at least 112 bytes, a name line of an item 84,
    # and an odd line holds one of the four predicates (41 bytes or more)
    cap_e = n // 100 + 16
    e_pred = np.empty(cap_e, dtype=np.int8)
    e_child = np.empty(cap_e, dtype=np.int64)
    e_parent = np.empty(cap_e, dtype=np.int64)
    cap_n = (n // 80 + 16) if want_names else 16
    n_q = np.empty(cap_n, dtype=np.int64)
    n_kind = np.empty(cap_n, dtype=np.int8)
    n_lang = np.empty(cap_n, dtype=np.int8)
    n_start = np.empty(cap_n, dtype=np.int64)
    n_end = np.empty(cap_n, dtype=np.int64)
    n_esc = np.empty(cap_n, dtype=np.bool_)
    n_line = np.empty(cap_n, dtype=np.int64)
    cap_o = n // 40 + 16
    o_line = np.empty(cap_o, dtype=np.int64)
    o_start = np.empty(cap_o, dtype=np.int64)
    o_end = np.empty(cap_o, dtype=np.int64)
    o_pred = np.empty(cap_o, dtype=np.int8)
    cap_i = (n // 80 + 16) if props.shape[0] else 16  # an identifier line has at least 84 bytes
    i_q = np.empty(cap_i, dtype=np.int64)
    i_prop = np.empty(cap_i, dtype=np.int8)
    i_start = np.empty(cap_i, dtype=np.int64)
    i_end = np.empty(cap_i, dtype=np.int64)
    i_line = np.empty(cap_i, dtype=np.int64)
    ni = 0
    ne = 0
    nn = 0
    no = 0
    line = 0
    i = 0
    while i < n:
        ls = i
        verdict = _SKIP
        pred = 0
        le = -1  # the line's newline, once known
        q = -1
        s0 = i
        i = _skip_ws(buf, i, n)
        if i < n and buf[i] != _NL and buf[i] != _HASH:
            s0 = i
            q, i = _subject(buf, i, n)
            i = _skip_ws(buf, i, n)
            pred = _predicate(buf, i, n, want_p31, want_names, props)
        if pred != 0:
            i = _skip_ws(buf, i + _predicate_length(pred, id_lens), n)
            if q >= 0 and not _eq(buf, s0, n, _ENT):
                q = -1
            if pred == PRED_P279 or pred == PRED_P31:
                verdict, p, le = _edge(buf, i, n, q, pred, seeds)
                if verdict == _KEEP:
                    e_pred[ne] = pred
                    e_child[ne] = q
                    e_parent[ne] = p
                    ne += 1
            elif pred >= PRED_ID:
                if q >= 0:  # identifiers of anything but an item are never kept
                    verdict, ts, te, le = _id_value(buf, i, n)
                    if verdict == _KEEP:
                        i_q[ni] = q
                        i_prop[ni] = pred - PRED_ID
                        i_start[ni] = ts
                        i_end[ni] = te
                        i_line[ni] = line
                        ni += 1
            elif q >= 0:  # names of anything but an item are never kept
                verdict, ts, te, esc, lang, le = _name(buf, i, n, lang_table, lang_lens)
                if verdict == _KEEP:
                    n_q[nn] = q
                    n_kind[nn] = 0 if pred == PRED_LABEL else 1
                    n_lang[nn] = lang
                    n_start[nn] = ts
                    n_end[nn] = te
                    n_esc[nn] = esc
                    n_line[nn] = line
                    nn += 1
        if le < 0:
            le = _eol(buf, i, n)
        if verdict == _ODD:
            o_line[no] = line
            o_start[no] = ls
            o_end[no] = le
            o_pred[no] = pred
            no += 1
        i = le + 1
        line += 1
    return (line, e_pred[:ne], e_child[:ne], e_parent[:ne], n_q[:nn], n_kind[:nn], n_lang[:nn], n_start[:nn],
            n_end[:nn], n_esc[:nn], n_line[:nn], o_line[:no], o_start[:no], o_end[:no], o_pred[:no], i_q[:ni],
            i_prop[:ni], i_start[:ni], i_end[:ni], i_line[:ni])
