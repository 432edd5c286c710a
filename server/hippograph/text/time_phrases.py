"""Time phrases without an LLM: "last week", "in May 2023", "between March and June", "next
week", "3 days from now", ISO dates. "in 3 days" is read as no time: as often a length ("read
the book in 3 days", "first time in 10 years") as a time ahead.

Pure: no I/O, no clock reads (`now` is a parameter). Calendar arithmetic is done in UTC,
weeks start on Monday, and every range is half-open: ``after <= t < before``.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial

from hippograph.domain.errors import InvalidInput

__all__ = ["Found", "find_range", "parse_event_time", "parse_time_bound", "utc"]


# --- time ranges -----------------------------------------------------------------------------
# A query's time phrase is found in two steps: every date expression in the text is read into
# the calendar period it names (`_FORMS`), then the word before it says how the period bounds
# the range ("since May" opens it, "before May" closes it, "between ... and ..." joins two).

_MONTH_NUMBERS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTH_ABBREVIATIONS = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name} | {"sept": 9}
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # northern, meteorological
_NUMBER_WORDS = dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve".split()))
_NUMBERS = {word: n for n, word in _NUMBER_WORDS.items()} | {"a": 1, "an": 1}

_FULL_MONTH = "(?P<mon>" + "|".join(_MONTH_NUMBERS) + ")"
# Abbreviations may end with a dot; full names may not, or "in May." would swallow the period.
_ANY_MONTH = "(?P<mon>" + "|".join(_MONTH_NUMBERS) + "|(?:" + "|".join(_MONTH_ABBREVIATIONS) + r")\.?)"
_WEEKDAY = "(?P<wd>" + "|".join(_WEEKDAYS) + ")"
_N = "(?P<n>[0-9]{1,4}|" + "|".join(_NUMBERS) + ")"
_UNIT = "(?P<unit>hour|day|week|month|year)"
_YEAR = "(?P<year>[0-9]{4})"
_RECENT_YEAR = "(?P<year>(?:19|20)[0-9]{2})"  # a bare number is a year only in this range
_DAY = "(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?"
_ISO_DATE = r"(?<![\w-])" + _YEAR + "-(?P<m>[0-9]{2})-(?P<day>[0-9]{2})"
_ISO_TIME = (
    r"[T ][0-9]{2}:[0-9]{2}(?P<seconds>:[0-9]{2}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?(?![\w:])"
)
_END = r"(?![\w'’])"  # not followed by more word, nor by a possessive ("May's")
_NOT_OF = r"\b(?!\s+of\b)"  # "the last year of her degree" is not a time range
_NOT_AFTER = r"(?!\s+(?:after|before)\b)"  # "in the next week after her surgery": another time's


@dataclass(frozen=True)
class _Span:
    start: datetime
    end: datetime


def utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _add_months(moment: datetime, months: int) -> datetime:
    year, month0 = divmod(moment.year * 12 + moment.month - 1 + months, 12)
    day = min(moment.day, calendar.monthrange(year, month0 + 1)[1])
    return moment.replace(year=year, month=month0 + 1, day=day)


def _months(year: int, first: int, count: int) -> _Span:
    start = datetime(year, first, 1, tzinfo=UTC)
    return _Span(start, _add_months(start, count))


def _back(now: datetime, n: int, unit: str) -> datetime:
    """`now` moved `n` hours/days/weeks/months/years into the past (a negative `n`: the future)."""
    if unit == "year":
        return _add_months(now, -12 * n)
    if unit == "month":
        return _add_months(now, -n)
    if unit == "hour":
        return now - timedelta(hours=n)
    return now - timedelta(days=n * (7 if unit == "week" else 1))


def _period(unit: str, moment: datetime) -> _Span:
    """The calendar hour/day/week/month/year that contains `moment`."""
    if unit == "hour":
        start = moment.replace(minute=0, second=0, microsecond=0)
        return _Span(start, start + timedelta(hours=1))
    if unit == "month":
        return _months(moment.year, moment.month, 1)
    if unit == "year":
        return _months(moment.year, 1, 12)
    start = _midnight(moment.date() - timedelta(days=moment.weekday() if unit == "week" else 0))
    return _Span(start, start + timedelta(days=7 if unit == "week" else 1))


# Readers: (match, now) -> the period the match names; they raise ValueError for 31 February.


def _number(match: re.Match[str]) -> int:
    word = match["n"].lower()
    return int(word) if word.isdigit() else _NUMBERS[word]


def _month_of(match: re.Match[str]) -> int:
    if match.groupdict().get("m"):  # ISO digits
        return int(match["m"])
    name = match["mon"].lower().rstrip(".")
    return _MONTH_NUMBERS.get(name) or _MONTH_ABBREVIATIONS[name]


def _day_of(match: re.Match[str], now: datetime) -> _Span:
    return _period("day", datetime(int(match["year"]), _month_of(match), int(match["day"]), tzinfo=UTC))


def _month_in_year(match: re.Match[str], now: datetime) -> _Span:
    return _months(int(match["year"]), _month_of(match), 1)


def _iso_datetime(match: re.Match[str], now: datetime) -> _Span:
    # A written time stands for the minute (or second) it names, as "May 2023" stands for a month.
    start = utc(datetime.fromisoformat(match.group().upper()))
    return _Span(start, start + timedelta(seconds=1 if match["seconds"] else 60))


def _day_not_after(match: re.Match[str], now: datetime) -> _Span:
    # A day without a year is the most recent one; a 29 February may be eight years back.
    month, day = _month_of(match), int(match["day"])
    for year in range(now.year, now.year - 9, -1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= now.date():
            return _period("day", _midnight(candidate))
    raise ValueError(f"no {day}/{month} in the last eight years")


def _month_not_after(match: re.Match[str], now: datetime) -> _Span:
    # "in May" is the latest May that has begun; "last May" is the latest one before this month.
    month, strictly_before = _month_of(match), match.group().lower().startswith("last")
    this_year = month < now.month or (month == now.month and not strictly_before)
    return _months(now.year if this_year else now.year - 1, month, 1)


def _weekday_not_after(match: re.Match[str], now: datetime) -> _Span:
    # "on Friday" may be today; "last Friday" is before today.
    days_back = (now.weekday() - _WEEKDAYS[match["wd"].lower()]) % 7
    if days_back == 0 and match.group().lower().startswith("last"):
        days_back = 7
    return _period("day", now - timedelta(days=days_back))


def _weekday_ahead(match: re.Match[str], now: datetime) -> _Span:
    # "next Friday" is the coming one, never today.
    days_ahead = (_WEEKDAYS[match["wd"].lower()] - now.weekday() - 1) % 7 + 1
    return _period("day", now + timedelta(days=days_ahead))


_WHICH = {"last": 1, "this": 0, "next": -1}  # how many periods back


def _calendar(match: re.Match[str], now: datetime) -> _Span:
    unit = match["unit"].lower()
    return _period(unit, _back(now, _WHICH[match["which"].lower()], unit))


def _ago(match: re.Match[str], now: datetime, back: int = 1) -> _Span:
    # "3 weeks ago" (back 1), "two days from now" (back -1): the period that holds that moment.
    unit = match["unit"].lower()
    return _period(unit, _back(now, back * _number(match), unit))


def _rolling(match: re.Match[str], now: datetime, back: int = 1) -> _Span:
    # "In the last 3 days" runs from the start of the day 3 days back through the end of today;
    # "in the next 3 days" (back -1) from the start of today through the end of the third ahead:
    # whole days, because many event times are dates without a time of day.
    unit, n = match["unit"].lower(), _number(match) if match.groupdict().get("n") else 1
    grain = "hour" if unit == "hour" else "day"
    moved, today = _period(grain, _back(now, back * n, unit)), _period(grain, now)
    return _Span(moved.start, today.end) if back > 0 else _Span(today.start, moved.end)


_ahead = partial(_ago, back=-1)
_rolling_ahead = partial(_rolling, back=-1)


_Reader = Callable[[re.Match[str], datetime], _Span]


@dataclass(frozen=True)
class _Form:
    pattern: re.Pattern[str]
    read: _Reader
    # Empty: the form is temporal on its own. Otherwise one of these words must precede it,
    # because a bare "May", "8 May" or "2023" is too often something else ("May I ask?").
    needs: frozenset[str] = frozenset()


# ASCII: under Unicode case folding "ſept" would match "sept" and then miss the month table.
_FLAGS = re.IGNORECASE | re.ASCII


def _form(pattern: str, read: _Reader, needs: frozenset[str] = frozenset()) -> _Form:
    return _Form(re.compile(pattern, _FLAGS), read, needs)


_IN = frozenset({"in", "during", "since", "after", "before", "until", "till", "through"})
_ON = frozenset({"on", "since", "after", "before", "until", "till", "through"})
# "8 May, 2023" and "May 8, 2023": the written dates that also serve as event times.
_DAY_MONTH_YEAR = _form(r"\b" + _DAY + r"\s+(?:of\s+)?" + _ANY_MONTH + r",?\s+" + _YEAR + r"(?!\w)", _day_of)
_MONTH_DAY_YEAR = _form(r"\b" + _ANY_MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r"(?!\w)", _day_of)

_FORMS = (
    _form(_ISO_DATE + _ISO_TIME, _iso_datetime),
    _form(_ISO_DATE + r"(?![\w-])", _day_of),
    _form(r"(?<![\w-])" + _YEAR + r"-(?P<m>[0-9]{2})(?![\w-])", _month_in_year),
    _DAY_MONTH_YEAR,
    _MONTH_DAY_YEAR,
    _form(r"\b" + _ANY_MONTH + r",?\s+" + _YEAR + r"(?!\w)", _month_in_year),
    _form(r"\b" + _DAY + r"\s+(?:of\s+)?" + _ANY_MONTH + _END, _day_not_after, _ON),
    _form(r"\b" + _ANY_MONTH + r"\s+" + _DAY + r"(?![\w'’:])", _day_not_after, _ON),
    _form(r"\blast\s+" + _FULL_MONTH + _END, _month_not_after),
    _form(r"\b" + _FULL_MONTH + _END, _month_not_after, _IN),
    _form(r"(?<![\w-])" + _RECENT_YEAR + r"(?![\w'’-])", lambda m, now: _months(int(m["year"]), 1, 12), _IN),
    _form(r"\b(?P<part>early|mid|late)[\s-]+" + _RECENT_YEAR + r"(?!\w)",
          lambda m, now: _months(int(m["year"]), {"early": 1, "mid": 4, "late": 7}[m["part"].lower()], 6)),
    _form(r"\b(?P<season>" + "|".join(_SEASONS) + r")\s+(?:of\s+)?" + _RECENT_YEAR + r"(?!\w)",
          lambda m, now: _months(int(m["year"]), _SEASONS[m["season"].lower()], 3)),
    _form(r"\btoday\b", lambda m, now: _period("day", now)),
    _form(r"\byesterday\b", lambda m, now: _period("day", now - timedelta(days=1))),
    _form(r"\btomorrow\b", lambda m, now: _period("day", now + timedelta(days=1))),
    # "last week" is the calendar week before this one; "in the last week" is the last 7 days.
    _form(r"\b(?P<which>last|this)\s+(?P<unit>week|month|year)" + _NOT_OF, _calendar),
    # "next week" is the coming one; "the next week after the parade" follows another time.
    _form(r"(?<!the )\b(?P<which>next)\s+(?P<unit>week|month|year)" + _NOT_OF + _NOT_AFTER, _calendar),
    _form(r"\b(?:(?:in|over|within|during)\s+the\s+(?:next|coming)|(?:the\s+)?coming)\s+" + _UNIT + _NOT_OF
          + _NOT_AFTER, _rolling_ahead),
    _form(r"\b(?:in|over|within|during)\s+the\s+next\s+" + _N + r"\s+" + _UNIT + "s?" + _NOT_OF
          + _NOT_AFTER, _rolling_ahead),
    _form(r"\b" + _N + r"\s+" + _UNIT + r"s?\s+from\s+(?:now|today)\b", _ahead),
    _form(r"\bnext\s+" + _WEEKDAY + _END, _weekday_ahead),
    _form(r"\b(?:(?:in|over|within|during)\s+the\s+last|(?:the\s+)?past)\s+" + _UNIT + _NOT_OF, _rolling),
    _form(r"\b(?:the\s+)?(?:last|past)\s+" + _N + r"\s+" + _UNIT + "s?" + _NOT_OF, _rolling),
    _form(r"\b" + _N + r"\s+" + _UNIT + r"s?\s+ago\b", _ago),
    _form(r"\blast\s+" + _WEEKDAY + _END, _weekday_not_after),
    _form(r"\b" + _WEEKDAY + _END, _weekday_not_after, _ON),
)  # fmt: skip

_PREPOSITION = re.compile(
    r"\b(?P<word>since|from|after|before|until|till|through|between|in|on|during|over|within)\s+(?:the\s+)?$",
    _FLAGS,
)
_JOINER = re.compile(r"\s*(?:and|to|until|till|through|-|–)\s*", _FLAGS)


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    span: _Span
    form: _Form
    match: re.Match[str]


@dataclass(frozen=True)
class Found:
    after: datetime | None
    before: datetime | None
    start: int  # where the phrase (with its preposition) sits in the text
    end: int
    # The length of the period the phrase names: a day for "yesterday" or "since 8 May", a
    # week for "since last week", the whole range for "between March and June". It is the
    # phrase's own precision, the scale on which a time is near or far from the range.
    grain: timedelta


def _hits(text: str, now: datetime) -> list[_Hit]:
    """Every readable date expression, leftmost first, the longest where they overlap."""
    found = []
    for form in _FORMS:
        for match in form.pattern.finditer(text):
            try:
                span = form.read(match, now)
            except (ValueError, OverflowError):  # 31 February, year 10000, ...
                continue
            found.append(_Hit(match.start(), match.end(), span, form, match))
    found.sort(key=lambda h: (h.start, h.start - h.end))
    chosen: list[_Hit] = []
    for hit in found:
        if not chosen or hit.start >= chosen[-1].end:
            chosen.append(hit)
    return chosen


def _read_before(hit: _Hit, later: _Span) -> _Span:
    """Re-read a year-less date as the latest one before `later`: "between May and June 2023"."""
    try:
        return hit.form.read(hit.match, later.end - timedelta(microseconds=1))
    except (ValueError, OverflowError):
        return hit.span


def _bounds(preposition: str | None, span: _Span) -> tuple[datetime | None, datetime | None]:
    if preposition == "since":
        return span.start, None
    if preposition == "after":  # after May = from June
        return span.end, None
    if preposition == "before":  # before May = up to 1 May
        return None, span.start
    if preposition in ("until", "till", "through"):  # until May = through the end of May
        return None, span.end
    return span.start, span.end


_RECENTLY = re.compile(r"\b(?:recently|lately|of\s+late|these\s+days|(?:the\s+)?recent\s+days)\b", _FLAGS)


def find_range(
    text: str, now: datetime, *, whole: bool = False, recent: timedelta | None = None
) -> Found | None:
    """The first time phrase in `text`; with `whole`, only one that is all of `text`.

    With `recent`, "recently" (or "lately") reads as the last `recent` up to now, but only when
    the text names no other time: in "what did she start recently, as she said on 3 June" the
    date is the time asked about.
    """
    found = _first_range(text, now, whole=whole)
    if found is None and recent is not None:
        vague = _RECENTLY.search(text)
        if vague and (not whole or (vague.start(), vague.end()) == (0, len(text))):
            try:
                found = Found(now - recent, None, vague.start(), vague.end(), recent)
            except OverflowError:  # "recently" in the first days of year 1
                return None
    return found


def _first_range(text: str, now: datetime, *, whole: bool) -> Found | None:
    hits = _hits(text, now)
    for i, hit in enumerate(hits):
        # Look only just before the hit, so that a long text stays linear.
        preposition = _PREPOSITION.search(text, max(0, hit.start - 24), hit.start)
        word = preposition["word"].lower() if preposition else None
        start = preposition.start() if preposition else hit.start
        following = hits[i + 1] if i + 1 < len(hits) else None
        if word in ("between", "from") and following and _JOINER.fullmatch(text, hit.end, following.start):
            first = _read_before(hit, following.span) if hit.form.needs else hit.span
            # min/max: "between June and May 2023" still gives a range.
            after, before = min(first.start, following.span.start), max(first.end, following.span.end)
            found = Found(after, before, start, following.end, before - after)
        elif hit.form.needs and word not in hit.form.needs and not whole:
            continue
        else:
            found = Found(*_bounds(word, hit.span), start, hit.end, hit.span.end - hit.span.start)
        if whole and (found.start, found.end) != (0, len(text)):
            return None
        return found
    return None


def parse_time_bound(value: str, now: datetime, *, end: bool) -> datetime:
    """Read an explicit `after` (end=False) or `before` (end=True) parameter.

    A datetime is that instant. A date or phrase names a period, and the bound is its start
    or its end, so after="2024-05-08" with before="2024-05-08" covers that whole day and
    before="last week" includes last week.
    """
    text = value.strip()
    try:
        return _midnight(date.fromisoformat(text)) + timedelta(days=1 if end else 0)
    except ValueError:
        pass
    except OverflowError:  # the day after 9999-12-31
        return datetime.max.replace(tzinfo=UTC)
    try:
        return utc(datetime.fromisoformat(text))
    except (ValueError, OverflowError):
        pass
    found = find_range(text, utc(now), whole=True) if text else None
    if found is None:
        raise InvalidInput(
            f"could not read {value!r} as a time: send an ISO 8601 date such as 2024-05-08 or "
            "2024-05-08T14:30:00Z, or a phrase like 'last week', 'in May 2023', '3 days ago', 'next week'"
        )
    bound = found.before if end else found.after
    if bound is None:
        raise InvalidInput(
            f"{value!r} is open-ended and gives no {'end' if end else 'start'}: send a date such as "
            "2024-05-08 or a period like 'May 2023' or 'last week'"
        )
    return bound


# LoCoMo's session times: "1:56 pm on 8 May, 2023"; a 24-hour "13:56 on 8 May 2023" works too.
_CLOCK_ON = re.compile(
    r"(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{2})\s*(?:(?P<half>[ap])\.?m\.?)?\s+on\s+", _FLAGS
)


def _clock(match: re.Match[str]) -> tuple[int, int]:
    hour, minute = int(match["hour"]), int(match["minute"])
    if match["half"]:
        if not 1 <= hour <= 12:
            raise ValueError("a 12-hour clock runs from 1 to 12")
        hour = hour % 12 + (12 if match["half"].lower() == "p" else 0)
    return hour, minute


def parse_event_time(value: str) -> datetime:
    """Read `remember(event_time=...)`: ISO 8601, "8 May 2023", "May 8, 2023", "1:56 pm on 8 May, 2023"."""
    text = value.strip()
    try:
        return utc(datetime.fromisoformat(text))
    except (ValueError, OverflowError):
        pass
    clock = _CLOCK_ON.match(text)
    written = text[clock.end() :] if clock else text
    match = _DAY_MONTH_YEAR.pattern.fullmatch(written) or _MONTH_DAY_YEAR.pattern.fullmatch(written)
    if match:
        try:
            hour, minute = _clock(clock) if clock else (0, 0)
            return _day_of(match, datetime.min).start.replace(hour=hour, minute=minute)
        except ValueError:  # 31 February, 13 pm
            pass
    raise InvalidInput(
        f"could not read {value!r} as an event time: send an ISO 8601 date or datetime such as "
        "2023-05-08 or 2023-05-08T13:56:00Z, or a date like '8 May 2023' or '1:56 pm on 8 May, 2023'"
    )
