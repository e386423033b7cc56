"""Spreadsheet metrics (OSWorld's table area): compare_table, compare_csv,
compare_conference_city_in_order.

`compare_table(result, expected=None, rules=[...])` opens the agent's xlsx (`result`) and,
when given, a gold xlsx (`expected`), then runs the rules in order; the score is 1.0 when
every rule holds and 0.0 at the first that does not. Rules name sheets like OSWorld does:

    0, 1, ...   the result's sheet at that index     "RI0"        same, spelled out
    "RNSheet1"  the result's sheet named Sheet1      "EI0"/"ENSheet1"  the expected book's

Rule types: sheet_name, sheet_data, sheet_print, sheet_fuzzy, check_cell, style, freeze, zoom,
data_validation, row_props, col_props, filter, sparkline, chart, pivot_table.

Cell values are the values saved in the file (openpyxl cannot compute formulas; the xlsx an
app such as LibreOffice saves carries each formula's last result). A rule naming a sheet that
does not exist fails; a rule type or match method that does not exist raises ValueError,
since that is a mistake in the task file rather than in the agent's work.

The modules: reading the books (workbook.py; cell values as OSWorld reads them, osworld_cells.py; colours,
colors.py), the rule types by name (rules.py), the rules by family (sheets.py: sheet_name, sheet_data,
sheet_print, sheet_fuzzy; styles.py: check_cell, style, with conditional_formats.py; sheet_settings.py: freeze,
zoom, data_validation, row_props, col_props, filter; charts.py: sparkline, chart; pivots.py: pivot_table), and
the metrics (compare.py: compare_table and the check of its rules; csv_files.py; conference_cities.py).
"""
from __future__ import annotations

from .... import extensions
from . import charts, pivots, sheet_settings, sheets, styles  # noqa: F401  (the rule modules register their rule types)
from .compare import compare_table, rule_failure, rules_problems
from .conference_cities import compare_conference_city_in_order
from .csv_files import compare_csv
from .osworld_cells import OSWorldReadRaises
from .rules import IGNORED_RULE_FIELDS, RULE_FIELDS, RuleCheck, RuleFields
from .sheets import FUZZY_FIELDS, FUZZY_MATCH_TYPES
from .styles import STYLE_PROPS

RULE_TYPES = tuple(RULE_FIELDS)  # the built-in rule types

__all__ = [
    "FUZZY_FIELDS", "FUZZY_MATCH_TYPES", "IGNORED_RULE_FIELDS", "RULE_FIELDS", "RULE_TYPES", "STYLE_PROPS",
    "OSWorldReadRaises", "RuleCheck", "RuleFields", "compare_conference_city_in_order", "compare_csv",
    "compare_table", "extensions", "rule_failure", "rules_problems",
]
