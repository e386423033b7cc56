"""Generates the Chrome tasks' local web pages and expected files (deterministic).

Each task's pages go under <task>/site/ and are served inside the desktop by
`python3 -m http.server 8000 --directory /home/user/site` (Chromium records http:// visits
in its history, unlike file:// ones). Run: python3 make_files.py
"""
from __future__ import annotations

import json
import shutil
from html import escape
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = "http://localhost:8000"

STYLE = ("body{font-family:DejaVu Sans,sans-serif;max-width:860px;margin:32px auto;padding:0 16px;color:#222;"
         "line-height:1.5}\n"
         "header{border-bottom:3px solid #2d5f8b;margin-bottom:20px}header a{margin-right:18px}\n"
         "h1{color:#2d5f8b}table{border-collapse:collapse}"
         "td,th{border:1px solid #bbb;padding:4px 10px;text-align:left}\n"
         "nav.links li{margin:8px 0;font-size:1.15em}")


def page(title: str, body: str, site: str = "Northwind Intranet", nav: str = "") -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{escape(title)}</title>\n"
            f"<style>{STYLE}</style>\n</head>\n<body>\n<header><p><b>{escape(site)}</b></p>{nav}</header>\n"
            f"<h1>{escape(title)}</h1>\n{body}\n</body>\n</html>\n")


def table(rows: list[tuple], header: tuple) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>\n" for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}</table>"


# -- the Northwind intranet --------------------------------------------------------------------

INTRANET_LINKS = [
    ("staff.html", "Staff directory"),
    ("holidays.html", "Holiday calendar 2027"),
    ("cafeteria.html", "Cafeteria menu"),
    ("it-help.html", "IT help desk"),
    ("travel-policy.html", "Travel policy"),
]

STAFF = [("Priya Raman", "Operations", "ext. 214"), ("Tom Becker", "IT", "ext. 301"),
         ("Jordan Miles", "Logistics", "ext. 118"), ("Aiko Tanaka", "Finance", "ext. 402"),
         ("Samuel Osei", "Sales", "ext. 520")]
HOLIDAYS = [("1 January", "New Year's Day"), ("2 April", "Good Friday"), ("5 April", "Easter Monday"),
            ("1 May", "Labour Day"), ("25 December", "Christmas Day"), ("26 December", "Boxing Day")]
TRAVEL_POLICY = [
    ("Booking", "All business trips are booked through the travel desk at least 14 days before departure."),
    ("Flights", "Economy class is used for flights shorter than 6 hours; "
                "premium economy is allowed on longer flights."),
    ("Hotels", "The nightly hotel limit is 140 EUR in most cities and 190 EUR in capital cities."),
    ("Meals", "Meals are reimbursed up to a daily allowance of 45 EUR with receipts."),
    ("Expense claims", "Expense claims must be submitted within 30 days of returning, with all receipts attached."),
]


def intranet() -> dict[str, str]:
    links = "".join(f'<li><a href="{href}">{escape(text)}</a></li>\n' for href, text in INTRANET_LINKS)
    nav = '<a href="index.html">Home</a>'
    policy = "".join(f"<h2>{escape(h)}</h2>\n<p>{escape(t)}</p>\n" for h, t in TRAVEL_POLICY)
    return {
        "index.html": page("Northwind Intranet", "<p>Welcome! Quick links:</p>\n<nav class=\"links\"><ul>\n"
                           + links + "</ul></nav>"),
        "staff.html": page("Staff directory", table(STAFF, ("Name", "Team", "Phone")), nav=nav),
        "holidays.html": page("Holiday calendar 2027", table(HOLIDAYS, ("Date", "Holiday")), nav=nav),
        "cafeteria.html": page("Cafeteria menu", "<p>Monday: lentil soup. Tuesday: vegetable curry. "
                               "Wednesday: fish and chips. Thursday: pasta bake. Friday: pizza.</p>", nav=nav),
        "it-help.html": page("IT help desk", "<p>Call ext. 301 or write to helpdesk@northwind.example.</p>", nav=nav),
        "travel-policy.html": page("Travel policy 2027", "<p>Effective 1 January 2027. Applies to all "
                                   "Northwind employees.</p>\n" + policy, nav=nav),
    }


# -- a recipe site -------------------------------------------------------------------------------

RECIPES = {
    "lentil-soup.html": ("Red lentil soup", ["200 g red lentils", "1 onion", "2 carrots", "1 litre stock",
                                              "1 tsp cumin"]),
    "tomato-pasta.html": ("Quick tomato pasta", ["250 g spaghetti", "400 g chopped tomatoes", "2 garlic cloves",
                                                  "basil"]),
    "banana-bread.html": ("Banana bread", ["3 ripe bananas", "250 g flour", "100 g sugar", "2 eggs",
                                            "1 tsp baking soda"]),
}


def recipes() -> dict[str, str]:
    out = {}
    for name, (title, ingredients) in RECIPES.items():
        items = "".join(f"<li>{escape(i)}</li>" for i in ingredients)
        out[f"recipes/{name}"] = page(title, f"<h2>Ingredients</h2>\n<ul>{items}</ul>\n<p>Serves 4.</p>",
                                      site="Kitchen Notes")
    return out


# -- apartment listings and news (history task) ---------------------------------------------------

APARTMENTS = {
    "harbour-view-2br.html": ("2-bedroom flat with harbour view", "1,250 EUR / month"),
    "linden-square-studio.html": ("Studio near Linden Square", "780 EUR / month"),
    "old-town-loft.html": ("Old town loft, 3 rooms", "1,640 EUR / month"),
}
NEWS = {
    "bike-lanes.html": ("Council approves new bike lanes",
                        "Four kilometres of bike lanes are coming to Harbour Street."),
    "farmers-market.html": ("Farmers market returns", "The market is back in Linden Square every Sunday."),
}


def history_site() -> dict[str, str]:
    out = {}
    for name, (title, rent) in APARTMENTS.items():
        out[f"apartments/{name}"] = page(title, f"<p>Rent: {escape(rent)}. Available from March.</p>",
                                         site="Harbour City Rentals")
    for name, (title, text) in NEWS.items():
        out[f"news/{name}"] = page(title, f"<p>{escape(text)}</p>", site="Harbour City News")
    return out


# -- tasks ---------------------------------------------------------------------------------------

def bookmarks_file() -> str:
    """A Bookmarks file whose bar has a "Recipes" folder with two recipes and a "Work" folder, the
    one used last (so Chromium offers it for a new bookmark). No checksum: Chromium accepts a
    file without one."""
    def url_node(id_: int, name: str, url: str) -> dict:
        return {"date_added": "13400000000000000", "id": str(id_), "name": name, "type": "url", "url": url}

    folder = {"children": [url_node(6, "Quick tomato pasta", f"{BASE}/recipes/tomato-pasta.html"),
                           url_node(7, "Banana bread", f"{BASE}/recipes/banana-bread.html")],
              "date_added": "13400000000000000", "date_modified": "13400000000000000", "id": "5",
              "name": "Recipes", "type": "folder"}
    work = {"children": [url_node(9, "Northwind Intranet", "https://intranet.northwind.example/"),
                         url_node(10, "Timesheets", "https://intranet.northwind.example/timesheets")],
            "date_added": "13400000000000000", "date_modified": "13405000000000000", "id": "8",
            "name": "Work", "type": "folder"}

    def root(id_: int, name: str, children: list) -> dict:
        return {"children": children, "date_added": "13400000000000000", "date_modified": "0",
                "id": str(id_), "name": name, "type": "folder"}

    return json.dumps({"roots": {"bookmark_bar": root(1, "Bookmarks bar", [folder, work]),
                                 "other": root(2, "Other bookmarks", []),
                                 "synced": root(3, "Mobile bookmarks", [])},
                       "version": 1}, indent=3)


# The template's Preferences (desktop_env/providers/local/build/home_template.py) plus the bookmarks bar.
PREFERENCES_WITH_BAR = json.dumps({
    "browser": {"has_seen_welcome_page": True, "check_default_browser": False},
    "distribution": {"skip_first_run_ui": True, "suppress_first_run_default_browser_prompt": True},
    "bookmark_bar": {"show_on_all_tabs": True},
})

TASKS: dict[str, dict[str, str]] = {
    "chrome-bookmark-recipe-to-folder": {**{f"site/{k}": v for k, v in recipes().items()},
                                         "Bookmarks": bookmarks_file(), "Preferences": PREFERENCES_WITH_BAR},
    "chrome-open-intranet-tabs": {f"site/{k}": v for k, v in intranet().items()},
    "chrome-font-size-large": {f"site/{k}": v for k, v in intranet().items()},
    "chrome-startup-page-intranet": {f"site/{k}": v for k, v in intranet().items()},
    "chrome-delete-apartment-history": {f"site/{k}": v for k, v in history_site().items()},
    "chrome-save-policy-as-pdf": {**{f"site/{k}": v for k, v in intranet().items()},
                                  # Phrases short enough to sit on one line of the printed page: OSWorld's
                                  # is_gold_text_included_in_pdf looks for each in the raw text, where a
                                  # sentence the page wraps has a newline inside it.
                                  "expected-phrases.json": json.dumps({
                                      "title": "Travel policy 2027",
                                      "hotels": "The nightly hotel limit is 140 EUR",
                                      "claims": "submitted within 30 days of returning"}, indent=2)},
    "chrome-lock-browser-with-pin": {f"site/{k}": v for k, v in intranet().items()},
}


def main() -> None:
    for task, files in TASKS.items():
        folder = HERE / task
        shutil.rmtree(folder, ignore_errors=True)
        for path, text in files.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)


if __name__ == "__main__":
    main()
