"""What a call cost, in USD, from token counts and a small price table.

Prices are list prices per 1M tokens (input, output) for standard, non-batch, short-context use;
they change, so a user can override or extend them with OSWORLD_PRICES=/path/to/prices.json,
a JSON object {model_prefix: [input_usd_per_1m, output_usd_per_1m]}, with "as_of": "YYYY-MM-DD"
saying when those prices were read (every price carries its date into the run's args.json).
A prefix matches whole name segments: "gpt-5" prices "gpt-5" and "gpt-5-2025-08-07" but not
"gpt-5.2", a different model; "llava" prices "llava:13b". The longest matching prefix wins.
An unknown model costs None ("unknown"), never 0.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from mm_agents.llm.base import Usage

PRICES_ENV = "OSWORLD_PRICES"


PRICES_AS_OF = "2025-08"  # when the built-in table's list prices were read
BUILT_IN = "the built-in price table"


@dataclass(frozen=True)
class Price:
    input_per_m: float
    output_per_m: float
    as_of: str | None = PRICES_AS_OF     # the date of the price; None: its source does not say
    source: str = BUILT_IN

    def record(self, model: str) -> dict[str, Any]:
        """The price as a run records it (args.json's `pricing`)."""
        return {"model": model, "input_usd_per_1m": self.input_per_m, "output_usd_per_1m": self.output_per_m,
                "as_of": self.as_of, "source": self.source}

    def cost(self, usage: Usage) -> float:
        return (usage.input_tokens * self.input_per_m + usage.output_tokens * self.output_per_m) / 1_000_000


class PriceTableError(ValueError):
    """The OSWORLD_PRICES file is missing or malformed."""


# Public list prices as of PRICES_AS_OF (USD per 1M tokens: input, output).
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "o1": Price(15.00, 60.00),
    "o1-mini": Price(1.10, 4.40),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "computer-use-preview": Price(3.00, 12.00),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-opus-4-0": Price(15.00, 75.00),
    "claude-opus-4-1": Price(15.00, 75.00),
    "claude-opus-4-20250514": Price(15.00, 75.00),
    "claude-opus-4-5": Price(5.00, 25.00),
    "claude-opus-4-6": Price(5.00, 25.00),
    "claude-opus-4-7": Price(5.00, 25.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
    "gemini-1.5-pro": Price(1.25, 5.00),
    "gemini-1.5-flash": Price(0.075, 0.30),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gemini-2.0-flash-lite": Price(0.075, 0.30),
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.5-computer-use-preview": Price(1.25, 10.00),
}


def load_overrides(path: str) -> dict[str, Price]:
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except (OSError, ValueError) as exc:
        raise PriceTableError(f"{PRICES_ENV}={path}: cannot read a JSON price table: {exc}") from exc
    if not isinstance(raw, dict):
        raise PriceTableError(f"{PRICES_ENV}={path}: expected an object {{model_prefix: [in, out]}}")
    as_of = raw.pop("as_of", None)
    if as_of is not None and not isinstance(as_of, str):
        raise PriceTableError(f"{PRICES_ENV}={path}: \"as_of\" must be the date of the prices as text, "
                              f"e.g. \"2026-01-15\", got {as_of!r}")
    prices = {}
    for prefix, pair in raw.items():
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in pair)):
            raise PriceTableError(f"{PRICES_ENV}={path}: {prefix!r} must map to [input_usd_per_1m, output_usd_per_1m]")
        prices[prefix] = Price(float(pair[0]), float(pair[1]), as_of, f"{PRICES_ENV}={path}")
    return prices


def price_table() -> dict[str, Price]:
    """The default table with the OSWORLD_PRICES file, if any, laid over it (read on each call,
    so a changed file takes effect without a restart)."""
    table = dict(DEFAULT_PRICES)
    path = os.environ.get(PRICES_ENV)
    if path:
        table.update(load_overrides(path))
    return table


# What may follow a prefix in a longer name of the same model: a version, date or tag.
_SEGMENT_SEPARATORS = ("-", ":", "@")


def _matches(name: str, prefix: str) -> bool:
    name, prefix = name.lower(), prefix.lower()
    return name == prefix or (name.startswith(prefix) and name[len(prefix)] in _SEGMENT_SEPARATORS)


def price_for(model: str) -> Price | None:
    table = price_table()
    # "openai/gpt-4o" or "models/gemini-2.5-pro" name the same model as the bare name.
    for name in dict.fromkeys((model, model.rsplit("/", 1)[-1])):
        matches = [prefix for prefix in table if _matches(name, prefix)]
        if matches:
            return table[max(matches, key=len)]
    return None


def cost_usd(model: str, usage: Usage) -> float | None:
    price = price_for(model)
    return None if price is None else price.cost(usage)
