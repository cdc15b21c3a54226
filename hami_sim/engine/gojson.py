"""Go's ``encoding/json`` as HAMi's decoders behave, for the registration codecs (``annotations``,
``legacy_codec``): type errors and syntax errors with Go's wording, keys matched case-insensitively.

A client reads these messages in a verdict's reason, so they are Go's byte for byte; they live apart
from the codecs because they are Go's rules, not HAMi's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "AnnotationError",
    "INT32",
    "UINT",
    "INT",
    "json_kind",
    "go_int",
    "go_str",
    "fold",
    "go_json_syntax_error",
]

INT32 = (-(2**31), 2**31 - 1)
UINT = (0, 2**64 - 1)
INT = (-(2**63), 2**63 - 1)


class AnnotationError(ValueError):
    """A registration value that does not decode; the message is the parser's detail."""


def json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def go_int(value: Any, struct: str, field: str, gotype: str, rng: tuple[int, int]) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AnnotationError(
            f"json: cannot unmarshal {json_kind(value)} into Go struct field {struct}.{field} of type {gotype}"
        )
    if isinstance(value, float) or not rng[0] <= value <= rng[1]:
        shown = repr(value) if isinstance(value, float) else str(value)
        raise AnnotationError(
            f"json: cannot unmarshal number {shown} into Go struct field {struct}.{field} of type {gotype}"
        )
    return value


def go_str(value: Any, struct: str, field: str) -> str:
    if not isinstance(value, str):
        raise AnnotationError(
            f"json: cannot unmarshal {json_kind(value)} into Go struct field {struct}.{field} of type string"
        )
    return value


def fold(obj: dict) -> dict[str, Any]:
    """Go's decoder: every key is matched to its field case-insensitively and assigned in order.

    So a later spelling of the same field overwrites an earlier one, and ``null`` leaves the field
    as it was: how HAMi's registration annotations are read (docs/device-rules.md, "Registration").
    """
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if value is not None:
            out[key.lower()] = value
    return out


# -- Go encoding/json syntax errors -------------------------------------------------------------------
# ``json.Unmarshal`` validates the whole value first (``checkValid``) and reports the first bad byte as
# ``invalid character 'x' <context>`` or ``unexpected end of JSON input``. orjson's messages differ, so
# when orjson rejects a value we re-scan it byte by byte with Go's scanner states for Go's wording.

_WS = frozenset(b" \t\r\n")
_DIGITS = frozenset(b"0123456789")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES = frozenset(b'bfnrt\\/"')
_LITERALS = {0x74: "true", 0x66: "false", 0x6E: "null"}
_NAMED_ESCAPES = {
    0x07: "\\a",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
    0x0B: "\\v",
    0x5C: "\\\\",
}


def _go_quote_char(c: int) -> str:
    """Go's ``quoteChar``: the byte as a rune, quoted like ``strconv.Quote`` but in single quotes."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    if c in _NAMED_ESCAPES:
        return f"'{_NAMED_ESCAPES[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if 0x80 <= c <= 0xA0 or c == 0xAD:  # not printable for strconv.IsPrint
        return f"'\\u{c:04x}'"
    return f"'{chr(c)}'"


class _GoSyntaxError(Exception):
    pass


def _bad(c: int, context: str) -> _GoSyntaxError:
    return _GoSyntaxError(f"invalid character {_go_quote_char(c)} {context}")


class _GoScanner:
    """Go's ``encoding/json`` scanner reduced to what decides its syntax error messages."""

    __slots__ = ("stack", "state", "literal", "pos")

    def __init__(self) -> None:
        self.stack: list[str] = []  # "key" | "value" (inside an object) | "array"
        self.state = "begin"
        self.literal = ""
        self.pos = 0

    def close(self) -> str:
        self.stack.pop()
        return "end" if self.stack else "top"

    def end_value(self, c: int) -> str:
        if not self.stack:
            return self.step_top(c)
        if c in _WS:
            return "end"
        top = self.stack[-1]
        if top == "key":
            if c == 0x3A:
                self.stack[-1] = "value"
                return "begin"
            raise _bad(c, "after object key")
        if top == "value":
            if c == 0x2C:
                self.stack[-1] = "key"
                return "key_string"
            if c == 0x7D:
                return self.close()
            raise _bad(c, "after object key:value pair")
        if c == 0x2C:
            return "begin"
        if c == 0x5D:
            return self.close()
        raise _bad(c, "after array element")

    @staticmethod
    def step_top(c: int) -> str:
        if c not in _WS:
            raise _bad(c, "after top-level value")
        return "top"

    def begin_value(self, c: int) -> str:
        if c in _WS:
            return "begin"
        if c == 0x7B:
            self.stack.append("key")
            return "key_or_close"
        if c == 0x5B:
            self.stack.append("array")
            return "value_or_close"
        if c == 0x22:
            return "string"
        if c == 0x2D:
            return "neg"
        if c == 0x30:
            return "zero"
        if 0x31 <= c <= 0x39:
            return "int"
        if c in _LITERALS:
            self.literal = _LITERALS[c]
            self.pos = 1
            return "literal"
        raise _bad(c, "looking for beginning of value")

    def step(self, state: str, c: int) -> str:
        """The state after byte ``c`` in ``state`` (Go's ``scanner.step``), or ``_GoSyntaxError``."""
        return _STEPS.get(state, _GoScanner.after_top)(self, c)

    # One method per Go scanner state; each returns the next state's name.

    def after_begin(self, c: int) -> str:
        return self.begin_value(c)

    def after_value_or_close(self, c: int) -> str:
        if c in _WS:
            return "value_or_close"
        return self.close() if c == 0x5D else self.begin_value(c)

    def after_key_or_close(self, c: int) -> str:
        if c in _WS:
            return "key_or_close"
        return self.close() if c == 0x7D else self.after_key_string(c)

    def after_key_string(self, c: int) -> str:
        if c in _WS:
            return "key_string"
        if c == 0x22:
            return "string"
        raise _bad(c, "looking for beginning of object key string")

    def after_string(self, c: int) -> str:
        if c == 0x22:
            return "end"
        if c == 0x5C:
            return "escape"
        if c < 0x20:
            raise _bad(c, "in string literal")
        return "string"

    def after_escape(self, c: int) -> str:
        if c in _ESCAPES:
            return "string"
        if c == 0x75:
            self.pos = 0
            return "unicode"
        raise _bad(c, "in string escape code")

    def after_unicode(self, c: int) -> str:
        if c not in _HEX:
            raise _bad(c, "in \\u hexadecimal character escape")
        self.pos += 1
        return "string" if self.pos == 4 else "unicode"

    def after_neg(self, c: int) -> str:
        if c == 0x30:
            return "zero"
        if 0x31 <= c <= 0x39:
            return "int"
        raise _bad(c, "in numeric literal")

    def after_int(self, c: int) -> str:
        return "int" if c in _DIGITS else self.after_zero(c)

    def after_zero(self, c: int) -> str:
        if c == 0x2E:
            return "dot"
        if c in (0x65, 0x45):
            return "exp"
        return self.end_value(c)

    def after_dot(self, c: int) -> str:
        if c in _DIGITS:
            return "frac"
        raise _bad(c, "after decimal point in numeric literal")

    def after_frac(self, c: int) -> str:
        if c in _DIGITS:
            return "frac"
        if c in (0x65, 0x45):
            return "exp"
        return self.end_value(c)

    def after_exp(self, c: int) -> str:
        return "exp_sign" if c in (0x2B, 0x2D) else self.after_exp_sign(c)

    def after_exp_sign(self, c: int) -> str:
        if c in _DIGITS:
            return "exp_digits"
        raise _bad(c, "in exponent of numeric literal")

    def after_exp_digits(self, c: int) -> str:
        return "exp_digits" if c in _DIGITS else self.end_value(c)

    def after_literal(self, c: int) -> str:
        expected = ord(self.literal[self.pos])
        if c != expected:
            raise _bad(c, f"in literal {self.literal} (expecting {_go_quote_char(expected)})")
        self.pos += 1
        return "end" if self.pos == len(self.literal) else "literal"

    def after_end(self, c: int) -> str:
        return self.end_value(c)

    def after_top(self, c: int) -> str:
        return self.step_top(c)


#: Go's scanner states and the method that reads the next byte in each; any other state is "top"
_STEPS: dict[str, Callable[[_GoScanner, int], str]] = {
    name.removeprefix("after_"): method
    for name, method in vars(_GoScanner).items()
    if name.startswith("after_") and name != "after_top"
}


def go_json_syntax_error(value: str | bytes) -> str | None:
    """The message Go's ``json.Unmarshal`` gives for ``value`` if it is not valid JSON, else None."""
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else bytes(value)
    scanner = _GoScanner()
    state = "begin"
    try:
        for c in data:
            state = scanner.step(state, c)
        if state != "top":
            state = scanner.step(state, 0x20)  # Go's eof(): feed one space, the value must then be complete
    except _GoSyntaxError as exc:
        return str(exc)
    return None if state == "top" else "unexpected end of JSON input"
