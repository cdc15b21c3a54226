"""A small PromQL evaluator for the subset our alerts and Grafana panels use, over real ``/metrics`` scrapes.

Why: a query that names the right metric can still mean the wrong thing (``outcome!="ok"`` counted the
filter verb's normal ``fit``/``no_fit`` answers as errors). Evaluating the shipped expressions against
what hami-sim really exports, with its real label values, catches that; checking names does not.

Data: a list of scrapes ``(unix_time, exposition text)``, parsed with prometheus_client's own parser.
An instant selector reads each series' newest sample at or before the evaluation time (the last
scrape); a range selector ``[5m]`` the samples within the window before it.

Supported: selectors with ``= != =~ !~`` matchers (regexes anchored, as in Prometheus); ``sum max min
avg count`` with ``by``/``without`` (before or after the argument); ``rate increase delta`` (the
difference between the first and last sample in the window, over their time span for ``rate``:
Prometheus also extrapolates to the window's edges and undoes counter resets, which changes no ratio
and no threshold these tests check); ``histogram_quantile`` (Prometheus' bucket interpolation);
``time()``; ``+ - * /`` and ``> < >= <= == !=`` between scalars and vectors (comparisons filter, as
without ``bool``), vector-vector matching one-to-one on all labels. Anything else raises
``PromQLError`` so an unsupported query is noticed, not silently skipped.
"""

from __future__ import annotations

import math
import operator
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["PromQLError", "Series", "evaluate", "parse_scrape"]

Labels = frozenset[tuple[str, str]]
Vector = dict[Labels, float]
Series = dict[Labels, list[tuple[float, float]]]

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?![smhdwy\w])
    | (?P<dur>\d+[smhdwy])
    | (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<op>=~|!~|!=|==|>=|<=|[-+*/><=(){}\[\],])
    | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
    )""",
    re.VERBOSE,
)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_AGGREGATIONS = {
    "sum": sum,
    "max": max,
    "min": min,
    "avg": lambda values: sum(values) / len(values),
    "count": len,
}
_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}


class PromQLError(ValueError):
    """A query outside the supported subset, or malformed."""


def parse_scrape(text: str) -> dict[Labels, float]:
    """Every sample of one exposition text, keyed by its labels (``__name__`` included)."""
    samples: dict[Labels, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[frozenset({**sample.labels, "__name__": sample.name}.items())] = float(sample.value)
    return samples


def series_from_scrapes(scrapes: Iterable[tuple]) -> Series:
    """Scrapes ``(unix_time, exposition text)`` as time series; a scrape ``(unix_time, text, target)``
    carries the labels Prometheus adds to each sample of that target (``{"instance": ..., "pod": ...}``),
    so several replicas' identical samples stay apart as they do in Prometheus."""
    series: Series = defaultdict(list)
    for at, text, *target in sorted(scrapes, key=lambda s: s[0]):
        extra = frozenset((target[0] if target else {}).items())
        for labels, value in parse_scrape(text).items():
            series[labels | extra].append((at, value))
    return dict(series)


def _tokens(query: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    query = query.strip()
    while pos < len(query):
        match = _TOKEN.match(query, pos)
        if match is None or match.end() == pos:
            raise PromQLError(f"cannot read {query[pos:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


@dataclass
class _Range:
    """A range vector: each series' samples within the window."""

    series: Series


def _drop_name(labels: Labels) -> Labels:
    return frozenset((k, v) for k, v in labels if k != "__name__")


class _Parser:
    def __init__(self, query: str, series: Series, at: float) -> None:
        self.tokens = _tokens(query)
        self.pos = 0
        self.series = series
        self.at = at

    # -- tokens --------------------------------------------------------------------------------------
    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise PromQLError(f"unexpected end, expected {expected!r}")
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise PromQLError(f"expected {expected!r}, got {token[1]!r}")
        self.pos += 1
        return token

    # -- grammar: comparison < additive < multiplicative < primary -----------------------------------
    def parse(self):
        value = self.comparison()
        if self.pos != len(self.tokens):
            raise PromQLError(f"unexpected {self.peek()!r}")
        return value

    def comparison(self):
        left = self.additive()
        while self.peek() in _COMPARISONS:
            op = self.take()[1]
            if self.peek() == "bool":
                raise PromQLError("the bool modifier is not supported")
            left = _binary(op, left, self.additive())
        return left

    def additive(self):
        left = self.multiplicative()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            left = _binary(op, left, self.multiplicative())
        return left

    def multiplicative(self):
        left = self.primary()
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            left = _binary(op, left, self.primary())
        return left

    def primary(self):
        kind, text = self.take()
        if kind == "num":
            return float(text)
        if text == "(":
            value = self.comparison()
            self.take(")")
            return value
        if text == "-":
            return _binary("*", -1.0, self.primary())
        if kind != "ident":
            raise PromQLError(f"unexpected {text!r}")
        if text in _AGGREGATIONS:
            return self.aggregation(text)
        if self.peek() == "(":
            return self.function(text)
        return self.selector(text)

    def labels_list(self) -> list[str]:
        self.take("(")
        names = []
        while self.peek() != ")":
            names.append(self.take()[1])
            if self.peek() == ",":
                self.take(",")
        self.take(")")
        return names

    def aggregation(self, name: str) -> Vector:
        grouping: tuple[str, list[str]] | None = None
        if self.peek() in ("by", "without"):
            grouping = (self.take()[1], self.labels_list())
        self.take("(")
        inner = self.comparison()
        self.take(")")
        if self.peek() in ("by", "without"):
            grouping = (self.take()[1], self.labels_list())
        if not isinstance(inner, dict):
            raise PromQLError(f"{name}() needs an instant vector")
        mode, names = grouping or ("by", [])
        groups: dict[Labels, list[float]] = defaultdict(list)
        for labels, value in inner.items():
            if mode == "by":
                key = frozenset((k, v) for k, v in labels if k in names)
            else:
                key = frozenset((k, v) for k, v in _drop_name(labels) if k not in names)
            groups[key].append(value)
        return {key: float(_AGGREGATIONS[name](values)) for key, values in groups.items()}

    def function(self, name: str):
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.comparison())
            if self.peek() == ",":
                self.take(",")
        self.take(")")
        if name == "time" and not args:
            return float(self.at)
        if name in ("rate", "increase", "delta") and len(args) == 1 and isinstance(args[0], _Range):
            return _over_window(name, args[0].series)
        if name == "histogram_quantile" and len(args) == 2 and isinstance(args[1], dict):
            return _histogram_quantile(float(args[0]), args[1])
        raise PromQLError(f"function {name}() with these arguments is not supported")

    def selector(self, name: str):
        matchers: list[tuple[str, str, str]] = [("__name__", "=", name)]
        if self.peek() == "{":
            self.take("{")
            while self.peek() != "}":
                label = self.take()[1]
                op = self.take()[1]
                kind, raw = self.take()
                if op not in ("=", "!=", "=~", "!~") or kind != "str":
                    raise PromQLError(f"bad matcher {label}{op}{raw}")
                matchers.append((label, op, raw[1:-1].encode().decode("unicode_escape")))
                if self.peek() == ",":
                    self.take(",")
            self.take("}")
        picked = {labels: samples for labels, samples in self.series.items() if _matches(labels, matchers)}
        if self.peek() == "[":
            self.take("[")
            kind, text = self.take()
            if kind != "dur":
                raise PromQLError(f"bad range {text!r}")
            self.take("]")
            window = int(text[:-1]) * _UNITS[text[-1]]
            return _Range(
                {
                    labels: [(t, v) for t, v in samples if self.at - window < t <= self.at]
                    for labels, samples in picked.items()
                }
            )
        out: Vector = {}
        for labels, samples in picked.items():
            recent = [v for t, v in samples if t <= self.at]
            if recent:
                out[labels] = recent[-1]
        return out


def _matches(labels: Labels, matchers: list[tuple[str, str, str]]) -> bool:
    values = dict(labels)
    for label, op, wanted in matchers:
        have = values.get(label, "")
        ok = {
            "=": have == wanted,
            "!=": have != wanted,
            "=~": re.fullmatch(wanted, have) is not None,
            "!~": re.fullmatch(wanted, have) is None,
        }[op]
        if not ok:
            return False
    return True


def _over_window(name: str, series: Series) -> Vector:
    out: Vector = {}
    for labels, samples in series.items():
        if len(samples) < 2:
            continue  # Prometheus too needs two samples in the window
        (t0, v0), (t1, v1) = samples[0], samples[-1]
        change = v1 - v0
        out[_drop_name(labels)] = change / (t1 - t0) if name == "rate" else change
    return out


def _histogram_quantile(q: float, buckets: Vector) -> Vector:
    """Prometheus' bucketQuantile: linear interpolation inside the bucket holding the q-th rank."""
    groups: dict[Labels, list[tuple[float, float]]] = defaultdict(list)
    for labels, count in buckets.items():
        le = dict(labels).get("le")
        if le is None:
            continue
        groups[frozenset((k, v) for k, v in _drop_name(labels) if k != "le")].append((float(le), count))
    out: Vector = {}
    for key, rows in groups.items():
        rows.sort()
        total = rows[-1][1]
        if rows[-1][0] != math.inf or total == 0:
            out[key] = math.nan
            continue
        rank = q * total
        index = next(i for i, (_le, count) in enumerate(rows) if count >= rank)
        if index == len(rows) - 1:
            out[key] = rows[-2][0] if len(rows) > 1 else math.nan
            continue
        start, below = (0.0, 0.0) if index == 0 else rows[index - 1]
        end, count = rows[index]
        out[key] = start + (end - start) * ((rank - below) / (count - below)) if count > below else end
    return out


def _arith(op: str, a: float, b: float) -> float:
    if op == "/":
        if b == 0:
            return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a)
        return a / b
    return {"+": operator.add, "-": operator.sub, "*": operator.mul}[op](a, b)


def _binary(op: str, left, right):
    if isinstance(left, _Range) or isinstance(right, _Range):
        raise PromQLError("a range vector needs a function such as rate()")
    if op in _COMPARISONS:
        test = _COMPARISONS[op]
        if isinstance(left, dict) and isinstance(right, dict):
            return {
                k: v
                for k, v in left.items()
                if _drop_name(k) in _by_labels(right) and test(v, _by_labels(right)[_drop_name(k)])
            }
        if isinstance(left, dict):
            return {k: v for k, v in left.items() if test(v, right)}
        if isinstance(right, dict):
            return {k: v for k, v in right.items() if test(left, v)}
        raise PromQLError("a comparison between scalars needs the bool modifier")
    if isinstance(left, dict) and isinstance(right, dict):
        others = _by_labels(right)
        return {
            _drop_name(k): _arith(op, v, others[_drop_name(k)])
            for k, v in left.items()
            if _drop_name(k) in others
        }
    if isinstance(left, dict):
        return {_drop_name(k): _arith(op, v, right) for k, v in left.items()}
    if isinstance(right, dict):
        return {_drop_name(k): _arith(op, left, v) for k, v in right.items()}
    return _arith(op, left, right)


def _by_labels(vector: Vector) -> dict[Labels, float]:
    out: dict[Labels, float] = {}
    for labels, value in vector.items():
        key = _drop_name(labels)
        if key in out:
            raise PromQLError(f"many-to-one matching needed for {dict(key)}")
        out[key] = value
    return out


def evaluate(query: str, scrapes: Iterable[tuple], at: float | None = None):
    """The value of ``query`` at ``at`` (default: the last scrape's time): a float for a scalar, else
    ``{labels: value}`` with labels as a frozenset of pairs (see ``as_dicts``)."""
    scrapes = list(scrapes)
    when = at if at is not None else max(scrape[0] for scrape in scrapes)
    return _Parser(query, series_from_scrapes(scrapes), when).parse()


def as_dicts(vector: Vector) -> dict[tuple[tuple[str, str], ...], float]:
    """A vector with sorted label tuples as keys (readable in assertion messages)."""
    return {tuple(sorted(labels)): value for labels, value in vector.items()}
