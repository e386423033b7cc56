"""compare_table's rule types by name: the decorator each rule module registers its checks with (kind
"table_rule" in desktop_env.extensions, where plugins add theirs), the fields each built-in type reads, and what
the checks share: a rule's pair of sheets, and matching a value against {"method": ..., "ref": ...}."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .... import extensions
from ...outcome import show
from ..general import match_value_to_rule
from .workbook import _Books

if TYPE_CHECKING:
    from openpyxl.worksheet.cell_range import MultiCellRange
    from openpyxl.worksheet.worksheet import Worksheet

# Each check gives None when its rule holds, else why not (the sheet, the cell, both values).
RuleCheck = Callable[[dict, _Books], "str | None"]
RuleFields = tuple[tuple[str, ...], tuple[str, ...]]  # (required, optional) field names

# The fields each built-in rule type reads (besides "type"): required, then optional, in the order the types
# register. Task validation checks rules against these, so a misspelled field is an error before any desktop starts.
RULE_FIELDS: dict[str, RuleFields] = {}
# Fields OSWorld's task files give a rule type whose check (OSWorld's too) never reads them: accepted,
# with a warning from validation, so such a task runs and scores as it does there.
IGNORED_RULE_FIELDS: dict[str, dict[str, str]] = {}
PAIR = ("sheet_idx0", "sheet_idx1")

# The rule types compare_table knows: the built-in ones and any a plugin registers (kind "table_rule").
_RULE_CHECKS = extensions.KindView("table_rule")


def table_rule(name: str, required: tuple[str, ...] = (), optional: tuple[str, ...] = (),
               ignored: dict[str, str] | None = None) -> Callable[[RuleCheck], RuleCheck]:
    """Registers a built-in rule check as rule type `name`, with the fields it reads (RULE_FIELDS) and
    those it accepts without reading (IGNORED_RULE_FIELDS, name -> why)."""
    def register_it(check: RuleCheck) -> RuleCheck:
        RULE_FIELDS[name] = (required, optional)
        if ignored:
            IGNORED_RULE_FIELDS[name] = ignored
        return extensions.register("table_rule", name, check, stacklevel=2)
    return register_it


def _sheet_pair(rule: dict, books: _Books) -> tuple[Worksheet | None, Worksheet | None]:
    return books.worksheet(rule["sheet_idx0"]), books.worksheet(rule["sheet_idx1"])


def _missing_sheets(rule: dict, books: _Books, *keys: str) -> str | None:
    """Which of the rule's sheets does not exist (None when all do)."""
    for key in keys or ("sheet_idx0", "sheet_idx1"):
        if books.worksheet(rule[key]) is None:
            side = "expected" if isinstance(rule[key], str) and rule[key].startswith("E") else "result"
            return f"sheet {rule[key]!r} ({key}) does not exist in the {side} workbook"
    return None


def _compare_sheets(rule: dict, books: _Books, read: Callable[[Worksheet], Any], what: str,
                    limit: int = 120) -> str | None:
    """What `read` gives for the rule's two sheets, the result's (sheet_idx0) against the other: None when
    they are equal, else "<what> <got> vs expected <want>", or which sheet does not exist."""
    first, second = _sheet_pair(rule, books)
    if first is None or second is None:
        return _missing_sheets(rule, books)
    got, want = read(first), read(second)
    return None if got == want else f"{what} {show(got, limit)} vs expected {show(want, limit)}"


def _ranges_within(inner: MultiCellRange, outer: MultiCellRange) -> bool:
    return all(part in outer for part in inner)


def _as_ranges(value: Any) -> MultiCellRange:
    from openpyxl.worksheet.cell_range import MultiCellRange
    return value if isinstance(value, MultiCellRange) else MultiCellRange(str(value))


def _matches(value: Any, rule: dict) -> bool:
    """OSWorld's `{"method", "ref"}` matching (see general.match_value_to_rule) plus the
    spreadsheet method `spreadsheet_range`: ref = [inner, outer], the value's ranges must
    cover `inner` and lie within `outer`."""
    from openpyxl.worksheet.cell_range import MultiCellRange
    if rule["method"] != "spreadsheet_range":
        return match_value_to_rule(value, rule)
    if value is None:
        return False
    inner, outer = rule["ref"]
    ranges = _as_ranges(value)
    return _ranges_within(MultiCellRange(inner), ranges) and \
        _ranges_within(ranges, MultiCellRange(outer))
