"""Cases for the VS Code metrics: settings and keybindings JSON, config and text files, extensions,
a test suite, zip files and a program's output."""

from __future__ import annotations

import io
import json
import zipfile

from pypdf import PdfWriter

from .cases import Case, Files

BINDING = {"key": "ctrl+j", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus"}


def settings_cases(files: Files) -> list[Case]:
    expected = {"expected": {"editor.wordWrapColumn": 50}}
    cases = []
    for label, text in [
        ("plain JSON", '{"editor.wordWrapColumn": 50, "files.autoSave": "off"}'),
        ("another value", '{"editor.wordWrapColumn": 80}'),
        ("a // comment", '// settings\n{"editor.wordWrapColumn": 50}'),
        ("a trailing comma", '{"editor.wordWrapColumn": 50,\n}'),
        ("not an object", "[1, 2]"),
        ("empty", ""),
    ]:
        cases.append(Case("check_json_settings", (files.text(text, ".json"), expected), label))
    cases.append(Case("check_json_settings", (None, expected), "no file"))
    workspace = {"expected": {"folders": [{"path": "project"}, {"path": "data1"}]}}
    cases.append(
        Case(
            "check_json_settings",
            (files.json({"folders": [{"path": "project"}, {"path": "data1"}], "settings": {}}), workspace),
            "a workspace",
        )
    )
    cases.append(
        Case(
            "check_json_settings",
            (files.json({"folders": [{"path": "data1"}, {"path": "project"}]}), workspace),
            "a workspace in another order",
        )
    )

    for label, text in [
        ("a list", f"[{json.dumps(BINDING)}]"),
        ("after a comment line", f"// Place your key bindings in this file\n[{json.dumps(BINDING)}]"),
        ("with a trailing comma", f"// keys\n[{json.dumps(BINDING)},\n]"),
        ("another binding", '[{"key": "ctrl+k", "command": "x"}]'),
        ("a comment inside", f"[\n// mine\n{json.dumps(BINDING)}]"),
        ("an object", json.dumps(BINDING)),
        ("empty", ""),
    ]:
        cases.append(Case("check_json_keybindings", (files.text(text, ".json"), {"expected": BINDING}), label))
    return cases


def config_cases(files: Files) -> list[Case]:
    cases = []
    theme = {"expected": '{"workbench.colorTheme": "Visual Studio Dark"}\n'}
    for label, text in [
        ("the theme among other settings", '{"workbench.colorTheme": "Visual Studio Dark", "a": 1}'),
        ("another theme", '{"workbench.colorTheme": "Default Dark+"}'),
        ("opening with a // comment", '// mine\n{"workbench.colorTheme": "Visual Studio Dark"}'),
        ("a trailing comma", '{"workbench.colorTheme": "Visual Studio Dark",}'),
        ("the same text", '{"workbench.colorTheme": "Visual Studio Dark"}\n'),
        ("the same text without its newline", '{"workbench.colorTheme": "Visual Studio Dark"}'),
    ]:
        path = files.text(text, ".json")
        cases.append(Case("compare_config", (path, theme), f"containment_ok: {label}", {"containment_ok": True}))
        cases.append(Case("compare_config", (path, theme), f"no options: {label}"))
        cases.append(Case("compare_config", (path, theme), f"containment_ok false: {label}", {"containment_ok": False}))
    for label, text in [
        ("exactly the word", "project"),
        ("the word and a newline", "project\n"),
        ("a path holding the word", "/home/user/project\n"),
        ("another word", "data"),
    ]:
        path = files.text(text)
        cases.append(Case("compare_config", (path, {"expected": "project"}), f"no options: {label}"))
    cases.append(Case("compare_config", (None, {"expected": "project"}), "no file"))
    cases.append(Case("compare_config", (files.text("x"), {"expected": ""}), "nothing expected"))
    return cases


def text_and_output_cases(files: Files) -> list[Case]:
    cases = []
    gold = files.text("Hello World\nsecond line\n")
    for label, text, options in [
        ("the same", "Hello World\nsecond line\n", {}),
        ("no final newline", "Hello World\nsecond line", {}),
        ("blanks differ", "Hello  World\tsecond line  \n", {"ignore_blanks": True}),
        ("blanks differ, not ignored", "Hello  World\nsecond line\n", {}),
        ("case differs", "hello world\nsecond line\n", {"ignore_case": True}),
        ("a trailing space ignored as blank", "Hello World\nsecond line \n", {"ignore_blanks": True}),
    ]:
        cases.append(Case("compare_text_file", (files.text(text), gold), label, options))
    cases.append(Case("compare_text_file", (None, gold), "no result"))

    listing = "ms-python.python\nmattn.lisp\n"
    for label, output, rules in [
        ("installed", listing, {"type": "contain", "expected": "mattn.lisp"}),
        ("not installed", listing, {"type": "contain", "expected": "undefined_publisher.test"}),
        ("removed", listing, {"type": "not_contain", "expected": "undefined_publisher.test"}),
        ("empty output", "", {"type": "contain", "expected": "mattn.lisp"}),
    ]:
        cases.append(Case("is_extension_installed", (output, rules), label))

    for label, produced, gold_text in [
        ("the number", "42.5\n", "42.5"),
        ("the number in a sentence", "The answer is 42.5", "42.5"),
        ("close enough", "42.50001", "42.5"),
        ("another number", "41", "42.5"),
        ("text", "done\n", "done"),
        ("other text", "not done", "done"),
    ]:
        cases.append(Case("compare_result_files", (files.text(produced), files.text(gold_text)), label))
    return cases


def suite_cases(files: Files) -> list[Case]:
    cases: list[Case] = []
    for label, module, test in [
        (
            "a passing suite",
            "def add(a, b):\n    return a + b\n",
            "from food import add\ndef test():\n    return add(1, 2) == 3\n",
        ),
        (
            "a failing suite",
            "def add(a, b):\n    return a - b\n",
            "from food import add\ndef test():\n    return add(1, 2) == 3\n",
        ),
        (
            "a suite that raises",
            "def add(a, b):\n    raise ValueError\n",
            "from food import add\ndef test():\n    return add(1, 2) == 3\n",
        ),
        ("a numeric result", "X = 0.25\n", "from food import X\ndef test():\n    return X\n"),
        ("an import error", "", "from food import nothing\ndef test():\n    return True\n"),
    ]:
        folder = files.folder / f"suite{len(cases)}"
        folder.mkdir()
        (folder / "food.py").write_text(module)
        (folder / "test_suite.py").write_text(test)
        cases.append(
            Case("check_python_file_by_test_suite", ([str(folder / "food.py")], str(folder / "test_suite.py")), label)
        )
    return cases


def zip_cases(files: Files) -> list[Case]:
    def archive(members: dict[str, bytes]) -> str:
        path = files.path(".zip")
        with zipfile.ZipFile(path, "w") as z:
            for name, data in members.items():
                z.writestr(name, data)
        return path

    blank = io.BytesIO()
    writer = PdfWriter()
    writer.add_blank_page(100, 100)
    writer.write(blank)
    gold = archive({"essay.txt": b"text", "paper.pdf": blank.getvalue()})
    return [
        Case(
            "compare_zip_files",
            (archive({"essay.txt": b"text", "paper.pdf": blank.getvalue()}), gold),
            "the same members",
        ),
        Case(
            "compare_zip_files",
            (archive({"essay.txt": b"other", "paper.pdf": blank.getvalue()}), gold),
            "a member differs",
        ),
        Case("compare_zip_files", (archive({"essay.txt": b"text"}), gold), "a member missing"),
        Case("compare_zip_files", (None, gold), "no result"),
    ]


def cases(files: Files) -> list[Case]:
    return (
        settings_cases(files)
        + config_cases(files)
        + text_and_output_cases(files)
        + suite_cases(files)
        + zip_cases(files)
    )
