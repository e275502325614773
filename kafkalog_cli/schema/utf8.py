"""UTF-8 as Java decodes it: ``new String(bytes, StandardCharsets.UTF_8)``.

Kafka turns bytes into text this way everywhere the tools print it (StringDecoder for keys
and payloads, ``Utils.utf8`` for header keys, ``Readable.readString`` for the strings of
generated messages). Well-formed input decodes as anywhere else; malformed input becomes
U+FFFD, but the JDK's decoder (``String.decodeUTF8_UTF16``, the same rules as
``sun.nio.cs.UTF_8.Decoder`` with REPLACE) decides how many bytes one U+FFFD stands for
differently from Python's ``errors="replace"``:

* a 3-byte sequence of well-formed shape that encodes a surrogate (``ED A0 80``) is one
  U+FFFD for all three bytes (Python: three);
* a 3- or 4-byte sequence cut by a bad continuation byte gives one U+FFFD for the lead
  and the continuation bytes before it that could still start a valid sequence (E0 needs
  A0..BF next, F0 needs 90..BF, F4 needs 80..8F); the rest is decoded again;
* a 4-byte sequence of well-formed shape outside U+10000..U+10FFFF (overlong, or above
  U+10FFFF with F4 90.., F5..F7) gives one U+FFFD for its lead byte only;
* a truncated 3- or 4-byte sequence at the end of the input is one U+FFFD (its trailing
  continuation byte, if any, goes with it);
* any other byte that cannot start a sequence (80..C1, F8..FF) is one U+FFFD.
"""

from __future__ import annotations

REPLACEMENT = "\ufffd"


def _is_cont(b: int) -> bool:
    return b & 0xC0 == 0x80


def _malformed3_2(b1: int, b2: int) -> bool:
    """String.isMalformed3_2: the second byte cannot follow the lead ``b1`` (E0..EF)."""
    return (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _is_cont(b2)


def _malformed4_2(b1: int, b2: int) -> bool:
    """String.isMalformed4_2: the second byte cannot follow the lead ``b1`` (F0..F4)."""
    return ((b1 == 0xF0 and not 0x90 <= b2 <= 0xBF) or (b1 == 0xF4 and b2 & 0xF0 != 0x80)
            or not _is_cont(b2))


def java_utf8(data) -> str:
    """``new String(data, UTF_8)`` (see the module docstring).

    :param data: bytes-like.
    """
    b = bytes(data)
    try:
        return b.decode("utf-8")  # well-formed UTF-8 is the same in Python and Java
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    put = out.append
    n = len(b)
    sp = 0
    while sp < n:
        b1 = b[sp]
        sp += 1
        if b1 < 0x80:
            put(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp < n:
                b2 = b[sp]
                if _is_cont(b2):
                    put(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                    sp += 1
                else:
                    put(REPLACEMENT)  # b2 is decoded again
                continue
            put(REPLACEMENT)
            break
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 1 < n:
                b2, b3 = b[sp], b[sp + 1]
                if _malformed3_2(b1, b2):
                    put(REPLACEMENT)  # String.malformed3: the lead alone
                elif not _is_cont(b3):
                    put(REPLACEMENT)  # the lead and b2
                    sp += 1
                else:
                    cp = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    put(REPLACEMENT if 0xD800 <= cp <= 0xDFFF else chr(cp))
                    sp += 2
                continue
            if sp < n and _malformed3_2(b1, b[sp]):
                put(REPLACEMENT)
                continue
            put(REPLACEMENT)  # truncated at the end (a last continuation byte with it)
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 2 < n:
                b2, b3, b4 = b[sp], b[sp + 1], b[sp + 2]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if (_is_cont(b2) and _is_cont(b3) and _is_cont(b4)
                        and 0x10000 <= uc <= 0x10FFFF):
                    put(chr(uc))
                    sp += 3
                    continue
                put(REPLACEMENT)  # String.malformed4: how many bytes it stands for
                if b1 > 0xF4 or _malformed4_2(b1, b2):
                    pass
                elif not _is_cont(b3):
                    sp += 1
                else:
                    sp += 2
                continue
            if b1 > 0xF4 or (sp < n and _malformed4_2(b1, b[sp])):
                put(REPLACEMENT)
                continue
            sp += 1
            put(REPLACEMENT)
            if sp < n and not _is_cont(b[sp]):
                continue
            break  # truncated at the end (a last continuation byte with it)
        else:  # 80..C1, F8..FF
            put(REPLACEMENT)
    return "".join(out)
