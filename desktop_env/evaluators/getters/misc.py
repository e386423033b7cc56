"""Getters that need no file: the task's own rules, dates relative to today, the a11y tree."""
from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..context import EvalContext
from ..registry import getter, requires

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")


@getter("rule")
@requires("rules")
def rule(ctx: EvalContext, config: dict) -> Any:
    return config["rules"]


@getter("accessibility_tree")
def accessibility_tree(ctx: EvalContext, config: dict) -> str:
    return ctx.accessibility_tree()


@getter("time_diff_range")
@requires("diff_range_in_minutes")
def time_diff_range(ctx: EvalContext, config: dict) -> Any:
    return config["diff_range_in_minutes"]


def _next_weekday(today: dt.date, weekday: int, skip_today: bool = True) -> dt.date:
    days = (weekday - today.weekday()) % 7
    return today + dt.timedelta(days=days or (7 if skip_today else 0))


def _nth_of_next_month(today: dt.date, day: int) -> dt.date:
    year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
    return dt.date(year, month, day)


def _first_monday_months_later(today: dt.date, months: int) -> dt.date:
    index = today.month - 1 + months
    first = dt.date(today.year + index // 12, index % 12 + 1, 1)
    return _next_weekday(first, 0, skip_today=False)


def _next_week(today: dt.date, weekday: int) -> dt.date:
    monday = today + dt.timedelta(days=7 - today.weekday())
    return monday + dt.timedelta(days=weekday)


# The phrases OSWorld's task files use, each a function of today's date. "next Friday"
# etc. mean the coming one (this week's if still ahead), as in OSWorld's tasks.
RELATIVE_DAYS: dict[str, Callable[[dt.date], dt.date]] = {
    "today": lambda d: d,
    "tomorrow": lambda d: d + dt.timedelta(days=1),
    "this month": lambda d: d,
    "5th next month": lambda d: _nth_of_next_month(d, 5),
    "10th next month": lambda d: _nth_of_next_month(d, 10),
    "11th next month": lambda d: _nth_of_next_month(d, 11),
    "this Saturday": lambda d: _next_weekday(d, 5, skip_today=False),
    "this Sunday": lambda d: _next_weekday(d, 6, skip_today=False),
    "next Monday": lambda d: _next_weekday(d, 0),
    "next Monday split": lambda d: _next_weekday(d, 0),
    "next Friday": lambda d: _next_weekday(d, 4),
    "next Friday split": lambda d: _next_weekday(d, 4),
    "next Saturday": lambda d: _next_weekday(d, 5),
    "next Sunday": lambda d: _next_weekday(d, 6),
    "next week Friday": lambda d: _next_week(d, 4),
    "next week Saturday": lambda d: _next_week(d, 5),
    "next week Sunday": lambda d: _next_week(d, 6),
    "first monday four months later": lambda d: _first_monday_months_later(d, 4),
    "first monday eight months later": lambda d: _first_monday_months_later(d, 8),
}


def format_date(template: str, day: dt.date) -> str:
    """Fills OSWorld's date placeholders ({DoW}, {Month}, {DayD}, {Day0D}, {Year}, ...)."""
    tokens = {
        "{DoW}": WEEKDAYS[day.weekday()],
        "{Month}": MONTHS[day.month - 1][:3],
        "{MonthFull}": MONTHS[day.month - 1],
        "{month}": MONTHS[day.month - 1].lower(),
        "{Month0D}": f"{day.month:02d}",
        "{MonthD}": str(day.month),
        "{DayD}": str(day.day),
        "{Day0D}": f"{day.day:02d}",
        "{Year}": str(day.year),
    }
    for token, value in tokens.items():
        template = template.replace(token, value)
    return template


def resolve_relative_day(phrase: str, today: dt.date) -> dt.date:
    try:
        return RELATIVE_DAYS[phrase](today)
    except KeyError:
        raise ValueError(f"unknown relative time {phrase!r}; known: {', '.join(RELATIVE_DAYS)}") from None


@getter("rule_relativeTime")
@requires("rules")
def rule_relative_time(ctx: EvalContext, config: dict, today: dt.date | None = None) -> dict:
    """The task's rules with relative dates ("tomorrow", "next Monday") made absolute.

    `rules.relativeTime` = {from, to?}; the formats to fill are in `rules.expected`
    under `time` (from only), or `from`/`to`, or the split day/month/year keys.
    Today is the day the evaluation ran (`ctx.now()`, so a rescore resolves the dates as the
    live evaluation did), taken in `rules.timezone` when given, else the machine's local zone
    (OSWorld asks a web service for the zone; we stay offline).
    """
    rules = copy.deepcopy(config["rules"])
    if today is None:
        try:
            zone = ZoneInfo(rules["timezone"]) if "timezone" in rules else None
        except ZoneInfoNotFoundError:
            raise ValueError(f"rules.timezone {rules['timezone']!r} is not a known time zone") from None
        today = ctx.now().astimezone(zone).date()
    relative, expected = rules["relativeTime"], rules["expected"]
    start = resolve_relative_day(relative["from"], today)
    if "to" not in relative:
        expected["time"] = format_date(expected["time"], start)
        return rules
    end = resolve_relative_day(relative["to"], today)
    if relative["to"].startswith("next") and end < start:
        end += dt.timedelta(days=7)  # "next Monday" .. "next Friday" is one trip, not backwards
    if relative["from"].endswith("split"):
        for key in ("puDay", "puMonth", "puYear"):
            expected[key] = format_date(expected[key], start)
    else:
        expected["from"] = format_date(expected["from"], start)
    if relative["to"].endswith("split"):
        for key in ("doDay", "doMonth", "doYear"):
            expected[key] = format_date(expected[key], end)
    else:
        expected["to"] = format_date(expected["to"], end)
    return rules
