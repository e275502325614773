"""``sasl.jaas.config`` values, parsed as Kafka's ``JaasConfig`` parses them (a
``java.io.StreamTokenizer`` with ``//`` and ``/* */`` comments, ``-``, ``_`` and ``$`` as
word characters, double- or single-quoted strings with Java's escapes)::

    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin" password="admin-secret" user_alice="alice-secret";

gives ``[LoginModule("org.apache...PlainLoginModule", "REQUIRED", {"username": "admin",
...})]``. The values are secrets: nothing here puts one in a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import SecurityConfigError

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTHBEARER_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")

_WORD, _NUMBER, _EOF = "word", "number", "eof"


@dataclass
class LoginModule:
    """One entry (``AppConfigurationEntry``): the login module class, its control flag
    (upper case) and options. ``repr`` leaves the option values out."""

    name: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"LoginModule({self.name}, {self.flag}, options={sorted(self.options)})"


def _is_word_char(c: str) -> bool:
    o = ord(c)
    return c.isascii() and (c.isalpha() or c in "-_$") or o >= 160


def _is_digit_char(c: str) -> bool:
    return c.isdigit() and c.isascii() or c in ".-"


_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}


def _tokens(text: str):
    """``(kind, value)``: ('word', s), ('quote', s), ('number', None), (char, None),
    ('eof', None) - the tokens of a StreamTokenizer as JaasConfig sets it up."""
    i, n = 0, len(text)
    while True:
        while i < n and ord(text[i]) <= 32:
            i += 1
        if i >= n:
            yield _EOF, None
            return
        c = text[i]
        if c == "/":
            if text.startswith("//", i):
                j = text.find("\n", i)
                i = n if j < 0 else j + 1
                continue
            if text.startswith("/*", i):
                j = text.find("*/", i + 2)
                i = n if j < 0 else j + 2
                continue
            j = text.find("\n", i)  # '/' is a comment character: the rest of the line
            i = n if j < 0 else j + 1
            continue
        if _is_digit_char(c):
            if c == "-" and not (i + 1 < n and (text[i + 1] == "." or text[i + 1].isdigit())):
                i += 1
                yield "-", None
                continue
            i += 1
            while i < n and (text[i].isdigit() and text[i].isascii() or text[i] == "."):
                i += 1
            yield _NUMBER, None
            continue
        if _is_word_char(c):
            j = i + 1
            while j < n and (_is_word_char(text[j]) or _is_digit_char(text[j])):
                j += 1
            yield _WORD, text[i:j]
            i = j
            continue
        if c in "\"'":
            i += 1
            out = []
            while i < n and text[i] != c and text[i] not in "\n\r":
                ch = text[i]
                if ch == "\\" and i + 1 < n:
                    i += 1
                    ch = text[i]
                    if "0" <= ch <= "7":
                        j = i + 1
                        limit = i + (3 if ch <= "3" else 2)
                        while j < min(limit, n) and "0" <= text[j] <= "7":
                            j += 1
                        out.append(chr(int(text[i:j], 8)))
                        i = j
                        continue
                    ch = _ESCAPES.get(ch, ch)
                out.append(ch)
                i += 1
            if i < n and text[i] == c:
                i += 1
            yield "quote", "".join(out)
            continue
        i += 1
        yield c, None


def parse_jaas_config(text: str, key: str = "sasl.jaas.config") -> list[LoginModule]:
    """The login module entries of a JAAS config value (``JaasConfig``).

    Raises:
        SecurityConfigError: Kafka's messages ("Login module not specified in JAAS
            config", "Value not specified for key 'k' in JAAS config", "JAAS config entry
            not terminated by semi-colon", ...), naming ``key``.
    """
    tokens = _tokens(text)
    entries = []

    def fail(message: str):
        raise SecurityConfigError(f"{key}: {message}", key)

    kind, value = next(tokens)
    while kind != _EOF:
        module = value
        if module is None:
            fail("Login module not specified in JAAS config")
        kind, value = next(tokens)
        if kind == _EOF:
            fail("Login module control flag not specified in JAAS config")
        if value is None:
            fail("Login module control flag is not available in the JAAS config")
        if value.upper() not in _FLAGS:
            fail(f"Invalid login module control flag '{value}' in JAAS config")
        entry = LoginModule(module, value.upper())
        while True:
            kind, value = next(tokens)
            if kind in (_EOF, ";"):
                break
            option = value
            kind, _ = next(tokens)
            if kind != "=":
                fail(f"Value not specified for key '{option}' in JAAS config")
            kind, value = next(tokens)
            if kind == _EOF or value is None:
                fail(f"Value not specified for key '{option}' in JAAS config")
            entry.options[option] = value
        if kind != ";":
            fail("JAAS config entry not terminated by semi-colon")
        entries.append(entry)
        kind, value = next(tokens)
    if not entries:
        fail("Login module not specified in JAAS config")
    return entries


def option(entries: list[LoginModule], name: str, module: str | None = None) -> str | None:
    """``JaasContext.configEntryOption``: the option of the first entry (of ``module``, when
    given) that has it."""
    for e in entries:
        if module is not None and e.name != module:
            continue
        if name in e.options:
            return e.options[name]
    return None
