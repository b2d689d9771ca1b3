"""JSON record files read strictly and counted: JSON Lines, a top-level array read one element
at a time, or a document holding a list of records (:mod:`taxoforge.files.records` is the
public face).

**Strict.** A key given twice in one object, a lone UTF-16 surrogate (``"\\ud800"``: no
character, and not writable as UTF-8), an integer of more digits than Python converts
(4,300: a "5,000-digit id") and bytes that are not UTF-8 are errors naming the file and line.
``NaN`` (what pandas writes for a missing value) reads as a missing value.

**Counted.** Every record is counted against ``max_records`` and its fields against
``max_cells`` as it is parsed (50 MB of ``{}`` lines would otherwise be 16 million Python
objects), every line or element against ``max_record_bytes`` before it is parsed, and a
document read whole against ``max_table_bytes`` as its bytes are read
(:mod:`taxoforge.files.record_limits`).
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

from taxoforge.files.paths import open_regular
from taxoforge.files.record_limits import RecordFileError, RecordLimits, Tally

__all__ = ["jsonl_records", "json_records", "sniff_json_kind", "decode_line"]

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: digits an integer may have (Python's own default limit of int/str conversion, whose cost is quadratic)
_MAX_DIGITS = 4300


def decode_line(raw: bytes, path: Path, n: int, error: type | None = None) -> str:
    """One line's bytes as text; a byte-order mark may open the file (line 1), not a line.

    Parameters
    ----------
    raw : bytes
        The line.
    path : Path
        The file (for the message).
    n : int
        Its line number.
    error : type, optional
        The exception raised (default :class:`RecordFileError`).

    Returns
    -------
    str
    """
    try:
        return raw.decode("utf-8-sig" if n == 1 else "utf-8")
    except UnicodeDecodeError as e:
        raise (error or RecordFileError)(f"{path}:{n}: not UTF-8 text ({e.reason}: byte {raw[e.start:e.start + 1]!r} "
                                         f"at column {e.start + 1}); re-encode the file as UTF-8") from None


class _Strict:
    """``json`` hooks: duplicate keys and over-long integers are errors, NaN and infinities None."""

    def __init__(self, path: Path) -> None:
        self.path, self.line = path, 0
        self._decoder = None

    def pairs(self, pairs):
        out = {}
        for k, v in pairs:
            if k in out:
                raise RecordFileError(f"{self.path}:{self.line}: the key {k!r} occurs twice in one JSON object; "
                                      "a record names each field once")
            out[k] = v
        return out

    def integer(self, text: str) -> int:
        if len(text.lstrip("-")) > _MAX_DIGITS:
            raise RecordFileError(f"{self.path}:{self.line}: an integer of {len(text.lstrip('-')):,} digits, more "
                                  f"than the {_MAX_DIGITS:,} a number may have; write such an id as a JSON string")
        return int(text)

    @staticmethod
    def constant(_name):
        return None

    def decoder(self) -> json.JSONDecoder:
        if self._decoder is None:
            self._decoder = json.JSONDecoder(object_pairs_hook=self.pairs, parse_constant=self.constant,
                                             parse_int=self.integer)
        return self._decoder


def _lone_surrogate(obj) -> str | None:
    """The field path of the first string of ``obj`` holding a lone surrogate, or None."""
    stack = [("", obj)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return where or "(the record)"
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str) and _SURROGATE.search(k):
                    return f"{where}.{k!r}".lstrip(".")
                stack.append((f"{where}.{k}".lstrip("."), x))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))
    return None


def _check_surrogates(text: str, obj, path: Path, n: int) -> None:
    if _SURROGATE_ESCAPE.search(text):
        bad = _lone_surrogate(obj)
        if bad is not None:
            raise RecordFileError(f"{path}:{n}: a lone UTF-16 surrogate escape in {bad} (\\ud800–\\udfff without its "
                                  "pair is no character); fix the text that wrote it")


def _parse(text: str, path: Path, n: int, strict: _Strict, what: str):
    strict.line = n
    try:
        obj = strict.decoder().decode(text)
    except json.JSONDecodeError as e:
        raise RecordFileError(f"{path}:{n}: not valid JSON ({e.msg} at column {e.colno}); expected {what}") from None
    except RecursionError:
        raise RecordFileError(f"{path}:{n}: JSON nested too deeply to read; expected {what}") from None
    _check_surrogates(text, obj, path, n)
    return obj


def jsonl_records(path: Path, limits: RecordLimits) -> tuple[list[dict], list[int]]:
    """Records of a JSON Lines file, one JSON object per non-blank line, counted.

    Parameters
    ----------
    path : Path
    limits : RecordLimits

    Returns
    -------
    (list of dict, list of int)
        The objects and their line numbers.
    """
    rows, lines = [], []
    strict = _Strict(path)
    tally = Tally(path, limits)
    cap = limits.max_record_bytes
    with open_regular(path, "record file") as fh:
        n = 0
        while True:
            raw = fh.readline(cap + 1)
            if not raw:
                break
            n += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                raise tally.too_long(n, "line")
            s = decode_line(raw, path, n).strip()
            if not s:
                continue
            obj = _parse(s, path, n, strict, "one JSON object per line")
            if not isinstance(obj, dict):
                raise RecordFileError(f"{path}:{n}: expected a JSON object, got {type(obj).__name__}")
            tally.record(n, len(obj))
            rows.append(obj)
            lines.append(n)
    return rows, lines


def sniff_json_kind(path: Path) -> str | None:
    """The JSON kind a file's first bytes say.

    Parameters
    ----------
    path : Path

    Returns
    -------
    str or None
        ``json`` for a file that opens a JSON array, ``jsonl`` for one that opens an object
        (a ``.json`` file may be either), else None.
    """
    c = _first_char(path)
    return "json" if c == "[" else "jsonl" if c == "{" else None


def _first_char(path: Path) -> str:
    with open_regular(path, "record file") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()
    return head[:1].decode("ascii", "replace")


def json_records(path: Path, limits: RecordLimits) -> tuple[list[dict], list[int], dict]:
    """Records of a JSON file and its document-level fields
    (:func:`taxoforge.files.records.read_json_records`).

    Parameters
    ----------
    path : Path
    limits : RecordLimits

    Returns
    -------
    (list of dict, list of int, dict)
    """
    c = _first_char(path)
    if c == "[":
        return (*_json_array(path, limits), {})
    tally = Tally(path, limits)
    with open_regular(path, "record file") as fh:
        data = fh.read(limits.max_table_bytes + 1)
    tally.decoded(len(data), what="holds")
    text = decode_line(data, path, 1)
    strict = _Strict(path)
    try:
        doc = _parse(text, path, 1, strict, "a JSON array of records, an object with a list of records, or JSON Lines")
    except RecordFileError:
        if c == "{" and "\n" in text.strip():  # several objects, one per line
            return (*jsonl_records(path, limits), {})
        raise
    if isinstance(doc, dict):
        for key in ("logs", "samples", "records", "data"):
            recs = doc.get(key)
            if isinstance(recs, list) and all(isinstance(r, dict) for r in recs):
                for i, r in enumerate(recs, 1):
                    tally.record(f"{key}[{i - 1}]", len(r))
                return recs, list(range(1, len(recs) + 1)), {k: v for k, v in doc.items() if k != key}
        tally.record(1, len(doc))
        return [doc], [1], {}
    raise RecordFileError(f"{path}:1: a JSON {type(doc).__name__}; expected a JSON array of records")


class _TextChunks:
    """A binary file as decoded text, a chunk at a time (a character cut between chunks is
    completed by the next); bytes that are not UTF-8 are an :class:`RecordFileError`."""

    def __init__(self, fh, path: Path, size: int = 1 << 16) -> None:
        self._fh, self._path, self._size = fh, path, size
        self._dec = codecs.getincrementaldecoder("utf-8-sig")()
        self.eof = False

    def read(self, at_least: int = 0) -> str:
        raw = self._fh.read(max(self._size, at_least))
        self.eof = not raw
        try:
            return self._dec.decode(raw, final=self.eof)
        except UnicodeDecodeError as e:
            raise RecordFileError(f"{self._path}: not UTF-8 text ({e.reason}); re-encode the file as UTF-8") from None


def _json_array(path: Path, limits: RecordLimits) -> tuple[list[dict], list[int]]:
    """The elements of a top-level JSON array, parsed one at a time, each at most ``max_record_bytes``."""
    strict = _Strict(path)
    tally = Tally(path, limits)
    cap = limits.max_record_bytes
    dec = strict.decoder()
    rows, lines = [], []
    with open_regular(path, "record file") as fh:
        src = _TextChunks(fh, path)
        buf, pos, line, state = "", 0, 1, "open"
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n":
                line += buf[pos] == "\n"
                pos += 1
            if pos >= len(buf):
                if src.eof:
                    if state == "done":
                        return rows, lines
                    raise RecordFileError(f"{path}:{line}: the JSON array is not closed (expected ']')")
                buf, pos = buf[pos:] + src.read(), 0
                continue
            ch = buf[pos]
            if state == "done":
                raise RecordFileError(f"{path}:{line}: text after the closing ']' of the JSON array")
            if state == "open":
                if ch != "[":
                    raise RecordFileError(f"{path}:{line}: expected a JSON array ('['), got {ch!r}")
                pos, state = pos + 1, "first"
                continue
            if ch == "]" and state in ("first", "after"):
                pos, state = pos + 1, "done"
                continue
            if state == "after":
                if ch != ",":
                    raise RecordFileError(f"{path}:{line}: expected ',' or ']' between array elements, got {ch!r}")
                pos, state = pos + 1, "element"
                continue
            while True:  # an element starts here: read on until it parses whole, at most cap bytes
                strict.line = line
                try:
                    obj, end = dec.raw_decode(buf, pos)
                    break
                except json.JSONDecodeError as e:
                    if src.eof:
                        raise RecordFileError(f"{path}:{line + buf.count(chr(10), pos, e.pos)}: not valid JSON "
                                              f"({e.msg}); expected a JSON array of records") from None
                    if len(buf) - pos > cap:
                        raise tally.too_long(line, "array element") from None
                    buf, pos = buf[pos:] + src.read(len(buf) - pos), 0
                except RecursionError:
                    raise RecordFileError(f"{path}:{line}: JSON nested too deeply to read") from None
            piece = buf[pos:end]
            if len(piece) > cap:
                raise tally.too_long(line, "array element")
            _check_surrogates(piece, obj, path, line)
            if not isinstance(obj, dict):
                raise RecordFileError(f"{path}:{line}: expected a JSON object in the array, got {type(obj).__name__}")
            tally.record(line, len(obj))
            rows.append(obj)
            lines.append(line)
            line += piece.count("\n")
            pos, state = end, "after"
