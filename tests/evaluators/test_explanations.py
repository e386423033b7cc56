"""Every metric family says why it gave less than full marks, on small real files: the sheet and
cell with both values, the paragraph, the slide, the missing file, the setting and its value."""
from __future__ import annotations

import json
from pathlib import Path

import openpyxl
from docx import Document
from openpyxl.worksheet.worksheet import Worksheet
from PIL import Image

from desktop_env.evaluators.metrics import (
    basic_os,
    chrome,
    docs,
    epub,
    general,
    gimp,
    pdf,
    slides,
    table,
    thunderbird,
    vlc,
    vscode,
)
from tests.evaluators.test_epub import make_epub
from tests.evaluators.test_pdf import write_docx
from tests.evaluators.test_slides import build_deck, textbox


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def sales_book(path: Path, north: int, sheet: str = "Sales") -> str:
    book = openpyxl.Workbook()
    ws = book.active
    assert isinstance(ws, Worksheet)  # a new workbook's one sheet
    ws.title = sheet
    for row in (["Region", "Sales"], ["North", north], ["South", 80]):
        ws.append(row)
    book.save(path)
    return str(path)


def test_table_names_the_sheet_the_first_differing_cell_and_both_values(tmp_path):
    gold = sales_book(tmp_path / "gold.xlsx", 120)
    rules = [{"type": "sheet_data", "sheet_idx0": "RNSales", "sheet_idx1": "ENSales"}]
    outcome = table.compare_table(sales_book(tmp_path / "agent.xlsx", 125), gold, rules=rules)
    assert outcome.score == 0.0
    assert outcome.explanation == ("rule 0 (sheet_data) does not hold: sheet 'RNSales' vs 'ENSales': "
                                   "cell B2 125 vs expected 120")
    renamed = table.compare_table(sales_book(tmp_path / "renamed.xlsx", 120, sheet="Data"), gold, rules=rules)
    assert "sheet 'RNSales' (sheet_idx0) does not exist in the result workbook" in renamed.explanation
    check = [{"type": "check_cell", "sheet_idx": 0, "coordinate": "B3",
              "props": {"value": {"method": "eq", "ref": 90}}}]
    assert "Sales!B3 value is 80.0, expected eq 90" in table.compare_table(gold, None, rules=check).explanation
    missing = table.compare_table(str(tmp_path / "never-saved.xlsx"), gold, rules=rules)
    assert missing.score == 0.0 and "never-saved.xlsx" in missing.explanation and "missing" in missing.explanation
    same = table.compare_table(sales_book(tmp_path / "same.xlsx", 120), gold, rules=rules)
    assert (same.score, same.explanation) == (1.0, "all 1 rules hold (sheet_data)")


def test_csv_names_the_first_differing_line(tmp_path):
    outcome = table.compare_csv(write(tmp_path / "a.csv", "id,name\n1,Ada\n2,Linus\n"),
                                write(tmp_path / "b.csv", "id,name\n1,Ada\n2,Grace\n"))
    assert outcome.score == 0.0 and "item 2: '2,Linus' vs expected '2,Grace'" in outcome.explanation


def test_docs_name_the_first_differing_paragraph_and_table_cell(tmp_path):
    gold = write_docx(tmp_path / "gold.docx", ["Dear Ada,", "The meeting is on Monday.", "Regards"])
    agent = write_docx(tmp_path / "agent.docx", ["Dear Ada,", "The meeting is on Tuesday.", "Regards"])
    outcome = docs.compare_docx_files(str(agent), str(gold), ignore_blanks=False)
    assert outcome.score == 0.0
    assert "paragraph item 1: 'The meeting is on Tuesday.' vs expected 'The meeting is on Monday.'" \
        in outcome.explanation
    assert "does not exist" in docs.compare_docx_files(str(tmp_path / "none.docx"), str(gold)).explanation
    # a formatting check first requires the same text, and says so
    assert docs.compare_line_spacing(str(agent), str(gold)).explanation.startswith("the text is not the gold file's")

    def with_table(path: Path, cell: str) -> str:
        doc = Document()
        grid = doc.add_table(rows=2, cols=2)
        for (i, j), text in {(0, 0): "Name", (0, 1): "Age", (1, 0): "Ada", (1, 1): cell}.items():
            grid.cell(i, j).text = text
        doc.save(str(path))  # python-docx takes a Path too; its annotation names only str and streams
        return str(path)

    tables = docs.compare_docx_tables(with_table(tmp_path / "t1.docx", "37"), with_table(tmp_path / "t2.docx", "36"))
    assert tables.explanation == "table 0 row 2 column 2: '37' vs expected '36'"


def test_slides_name_the_slide_and_what_differs(tmp_path):
    gold = build_deck(tmp_path / "gold.pptx")

    def unbold(prs):
        textbox(prs).text_frame.paragraphs[0].runs[0].font.bold = False

    outcome = slides.compare_pptx_files(build_deck(tmp_path / "agent.pptx", unbold), gold)
    assert outcome.score == 0.0
    assert outcome.explanation.startswith("slide 1 differs:") and "bold" in outcome.explanation
    assert slides.compare_pptx_files(build_deck(tmp_path / "same.pptx"), gold).explanation == \
        "the 3 slides match on everything examined"
    assert "not a readable .pptx" in slides.compare_pptx_files(write(tmp_path / "x.pptx", "no"), gold).explanation


def test_pdf_says_how_alike_the_text_is_and_which_gold_value_is_missing(tmp_path, libreoffice):
    sources = [write_docx(tmp_path / "invoice.docx", ["Invoice 243729", "Total due: 1,250.00 EUR"])]
    libreoffice.convert(sources, "pdf", tmp_path / "out")
    invoice = str(tmp_path / "out" / "invoice.pdf")
    gold = write(tmp_path / "gold.json", json.dumps({"number": "243729", "total": "9,999.00 EUR"}))
    outcome = pdf.is_gold_text_included_in_pdf(invoice, gold)
    assert outcome.score == 0.0 and outcome.explanation == "the PDF's text lacks ['9,999.00 EUR']"
    pages = pdf.check_pdf_pages(invoice, {"relation": "ge", "ref_value": 2})
    assert pages.explanation == "1 pages, expected ge 2"


def test_general_text_and_json_metrics_show_expected_and_actual(tmp_path):
    settings = write(tmp_path / "settings.json", json.dumps({"editor": {"fontSize": 12}}))
    rules = {"expect": [{"key": ["editor", "fontSize"], "method": "eq", "ref": 14}]}
    assert general.check_json(settings, rules).explanation == "key ['editor', 'fontSize'] is 12, expected eq 14"
    assert general.exact_match("uint32 300\n", {"expected": "uint32 0\n"}).explanation == \
        "got 'uint32 300\\n', expected 'uint32 0\\n'"
    assert general.file_contains(str(tmp_path / "gone.txt"), {"expected": ["x"]}).explanation.endswith(
        "gone.txt' does not exist")
    lines = general.diff_text_file(write(tmp_path / "a.py", "a = 1\nb = 2\n"),
                                   write(tmp_path / "b.py", "a = 1\nb = 3\n"))
    assert 0 < lines.score < 1 and "item 1: 'b = 2' vs expected 'b = 3'" in lines.explanation


def test_app_settings_metrics_name_the_setting_and_its_value(tmp_path):
    prefs = write(tmp_path / "prefs.js", 'user_pref("mail.spam.manualMark", false);\n')
    rule = {"expect": {"mail.spam.manualMark": {"method": "eq", "ref": True}}}
    assert thunderbird.check_thunderbird_prefs(prefs, rule).explanation == \
        "pref 'mail.spam.manualMark' is False, expected eq True"
    vlcrc = write(tmp_path / "vlcrc", "[qt]\nqt-max-volume=200\n")
    assert vlc.check_qt_max_volume(vlcrc, {"expected_qt_max_volume": "300"}).explanation == \
        "qt-max-volume is '200', expected '300'"
    assert vlc.check_qt_bgcone(vlcrc, {"expected_qt_bgcone": "0"}).explanation == \
        "qt-bgcone is '1' (the default), expected '0'"
    code = write(tmp_path / "settings.json", '{\n  "editor.fontSize": 12\n}')
    assert vscode.check_json_settings(code, {"expected": {"editor.fontSize": 14}}).explanation == \
        "setting 'editor.fontSize' is 12, expected 14"
    assert basic_os.is_utc_0("Time zone: Europe/Paris (CET, +0100)").explanation == \
        "the time zone offset is +0100, expected +0000"


def test_browser_and_html_metrics_say_what_the_page_or_tab_was(tmp_path):
    tab = chrome.is_expected_active_tab({"url": "https://www.example.org/b"}, {"type": "url", "url": "example.org/a"})
    assert tab.score == 0.0
    assert "'https://www.example.org/b'" in tab.explanation and "'example.org/a'" in tab.explanation
    html = chrome.compare_htmls(write(tmp_path / "a.html", "<html><body><p>Hi</p><p>Ada</p></body></html>"),
                                write(tmp_path / "b.html", "<html><body><p>Hi</p><p>Bob</p></body></html>"))
    assert html.score == 0.0 and "'Ada'" in html.explanation and "'Bob'" in html.explanation


def test_image_metrics_report_the_measure_and_its_threshold(tmp_path):
    Image.new("RGB", (40, 30), (200, 200, 200)).save(tmp_path / "light.png")
    Image.new("RGB", (40, 30), (30, 30, 30)).save(tmp_path / "dark.png")
    brighter = gimp.check_brightness_decrease_and_structure_sim(str(tmp_path / "light.png"), str(tmp_path / "dark.png"))
    assert brighter.explanation == "mean brightness 200.0 is not below the original's 30.0"
    size = gimp.check_image_size(str(tmp_path / "light.png"), {"width": 64})
    assert size.explanation == "the image is 40x30; width 40, expected 64"
    assert "image 2 " in gimp.check_structure_sim(str(tmp_path / "light.png"), str(tmp_path / "no.png")).explanation


def test_epub_names_the_least_alike_document(tmp_path):
    outcome = epub.compare_epub(make_epub(tmp_path / "a.epub", ["The cat sat.", "It rained."]),
                                make_epub(tmp_path / "b.epub", ["The cat sat.", "It snowed."]))
    assert 0 < outcome.score < 1
    assert "document 1" in outcome.explanation and "'rained.' vs expected 'snowed.'" in outcome.explanation
