"""VS Code metrics on settings/keybindings files as VS Code writes them, text files, zips, tests."""
from __future__ import annotations

import zipfile

import pytest

from desktop_env.evaluators.fixes import evaluator_fixes
from desktop_env.evaluators.metrics.vscode import (
    check_html_background_image,
    check_json_keybindings,
    check_json_settings,
    check_python_file_by_gold_file,
    check_python_file_by_test_suite,
    compare_answer,
    compare_config,
    compare_result_files,
    compare_text_file,
    compare_zip_files,
    is_extension_installed,
    parse_jsonc,
)


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


SETTINGS = """{
    // Saved by VS Code
    "workbench.colorTheme": "Default Dark Modern",
    "files.autoSave": "afterDelay",
    "files.autoSaveDelay": 500,
    "files.exclude": {
        "**/__pycache__": true, /* hide caches */
    },
}
"""

KEYBINDINGS = """// Place your key bindings in this file to override the defaults
[
    {
        "key": "ctrl+j",
        "command": "workbench.action.focusActiveEditorGroup",
        "when": "terminalFocus"
    }
]"""


def test_parse_jsonc_accepts_comments_and_trailing_commas_but_not_inside_strings():
    assert parse_jsonc(SETTINGS)["files.exclude"] == {"**/__pycache__": True}
    assert parse_jsonc('{"url": "http://x//y", "s": "a,}"}') == {"url": "http://x//y", "s": "a,}"}
    with pytest.raises(ValueError):
        parse_jsonc('{"a": }')


def test_check_json_settings_reads_plain_json_as_osworld_does(tmp_path):
    # OSWorld's json.load cannot read VS Code's comments and trailing commas: 0, whatever the values.
    as_vscode_writes = write(tmp_path, "commented.json", SETTINGS)
    assert check_json_settings(as_vscode_writes, {"expected": {"files.autoSave": "afterDelay"}}).score == 0.0
    plain = write(tmp_path, "plain.json", '{"files.autoSave": "afterDelay", "editor.wordWrapColumn": 50}')
    assert check_json_settings(plain, {"expected": {"files.autoSave": "afterDelay"}}).score == 1.0


def test_check_json_settings_with_the_evaluator_fixes(tmp_path):
    settings = write(tmp_path, "settings.json", SETTINGS)
    with evaluator_fixes():
        check_json_settings_with_fixes(tmp_path, settings)


def check_json_settings_with_fixes(tmp_path, settings):
    assert check_json_settings(settings,
                               {"expected": {"files.autoSave": "afterDelay", "files.autoSaveDelay": 500}}).score == 1.0
    assert check_json_settings(settings, {"expected": {"files.exclude": {"**/__pycache__": True}}}).score == 1.0
    assert check_json_settings(settings, {"expected": {"files.autoSaveDelay": 1000}}).score == 0.0
    assert check_json_settings(settings, {"expected": {"debug.focusEditorOnBreak": False}}).score == 0.0
    assert check_json_settings(None, {"expected": {"files.autoSave": "afterDelay"}}).score == 0.0
    assert check_json_settings(write(tmp_path, "broken.json", '{"files.autoSave": '), {"expected": {}}).score == 0.0


def test_check_json_keybindings_reads_json_after_the_first_line_only(tmp_path):
    wanted = {"key": "ctrl+j", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus"}
    trailing_comma = write(tmp_path, "comma.json", KEYBINDINGS.replace("}\n]", "},\n]"))
    assert check_json_keybindings(trailing_comma, {"expected": wanted}).score == 0.0
    with evaluator_fixes():
        assert check_json_keybindings(trailing_comma, {"expected": wanted}).score == 1.0


def test_check_json_keybindings_after_the_comment_line(tmp_path):
    bindings = write(tmp_path, "keybindings.json", KEYBINDINGS)
    wanted = {"key": "ctrl+j", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus"}
    assert check_json_keybindings(bindings, {"expected": wanted}).score == 1.0
    assert check_json_keybindings(bindings, {"expected": {**wanted, "when": "editorFocus"}}).score == 0.0
    assert check_json_keybindings(write(tmp_path, "obj.json", "{}"), {"expected": wanted}).score == 0.0
    assert check_json_keybindings(None, {"expected": wanted}).score == 0.0


def test_compare_text_file(tmp_path):
    gold = write(tmp_path, "gold.txt", "Hello VS Code\nreplace done\n")
    assert compare_text_file(write(tmp_path, "same.txt", "Hello VS Code\nreplace done\n"), gold).score == 1.0
    assert compare_text_file(write(tmp_path, "other.txt", "Hello VS Code\nreplace todo\n"), gold).score == 0.0
    assert compare_text_file(None, gold).score == 0.0
    assert compare_text_file(str(tmp_path / "missing.txt"), gold).score == 0.0


def test_compare_text_file_ignore_blanks_and_case(tmp_path):
    gold = write(tmp_path, "gold.bib", "@article{key,\n  title={Attention Is All You Need},\n}\n")
    reflowed = write(tmp_path, "agent.bib", "@article{key,\n\ttitle={Attention Is All You Need},\n\n}")
    shouting = write(tmp_path, "upper.bib", "@ARTICLE{KEY,\n  TITLE={ATTENTION IS ALL YOU NEED},\n}\n")
    assert compare_text_file(reflowed, gold).score == 0.0
    assert compare_text_file(reflowed, gold, ignore_blanks=True).score == 1.0
    assert compare_text_file(shouting, gold, ignore_case=True).score == 1.0


def test_compare_config_exact_text(tmp_path):
    rules = {"expected": "project"}
    assert compare_config(write(tmp_path, "OpenProject.txt", "project"), rules).score == 1.0
    assert compare_config(write(tmp_path, "newline.txt", "project\n"), rules).score == 1.0
    assert compare_config(write(tmp_path, "other.txt", "Desktop"), rules).score == 0.0
    assert compare_config(None, rules).score == 0.0


def test_compare_config_containment_ok_checks_json_containment(tmp_path):
    rules = {"expected": "{\"workbench.colorTheme\": \"Visual Studio Dark\"}\n"}
    dark = write(tmp_path, "settings.json", SETTINGS.replace("Default Dark Modern", "Visual Studio Dark"))
    # Comments make it no JSON to OSWorld, and the expected text is no substring of it.
    assert compare_config(dark, rules, containment_ok=True).score == 0.0
    with evaluator_fixes():
        assert compare_config(dark, rules, containment_ok=True).score == 1.0
        assert compare_config(write(tmp_path, "light.json", SETTINGS), rules, containment_ok=True).score == 0.0
    plain = write(tmp_path, "plain.json", '{"workbench.colorTheme": "Visual Studio Dark", "a": 1}')
    assert compare_config(plain, rules).score == 1.0  # containment is the default, as in OSWorld
    assert compare_config(plain, rules, containment_ok=False).score == 0.0
    assert compare_config(write(tmp_path, "text.txt", "my project folder"), {"expected": "project"},
                          containment_ok=True).score == 1.0


def test_compare_answer():
    assert compare_answer("42", {"expected": "42"}).score == 1.0
    assert compare_answer("41", {"expected": "42"}).score == 0.0
    assert compare_answer(None, {"expected": "42"}).score == 0.0


def test_is_extension_installed_on_list_extensions_output():
    output = "ms-python.debugpy\nms-python.python\nnjpwerner.autodocstring\n"
    assert is_extension_installed(output, {"type": "contain", "expected": "ms-python.python"}).score == 1.0
    assert is_extension_installed(output, {"type": "contain", "expected": "mattn.lisp"}).score == 0.0
    assert is_extension_installed(output, {"type": "not_contain", "expected": "mattn.lisp"}).score == 1.0
    assert is_extension_installed(None, {"type": "not_contain", "expected": "mattn.lisp"}).score == 0.0
    with pytest.raises(ValueError, match="contain"):
        is_extension_installed(output, {"type": "regex", "expected": "x"})


@pytest.fixture(scope="module")
def essay_pdfs(tmp_path_factory, libreoffice) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("essay")
    (folder / "essay.txt").write_text("Recruitment and retention of health professionals across Europe.\n" * 5)
    (folder / "draft.txt").write_text("A completely different first draft about something else.\n")
    libreoffice.convert([folder / "essay.txt", folder / "draft.txt"], "pdf", folder)
    return {name: (folder / f"{name}.pdf").read_bytes() for name in ("essay", "draft")}


def make_zip(path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return str(path)


def test_compare_zip_files(tmp_path, essay_pdfs):
    gold = make_zip(tmp_path / "gold.zip", {"essay.pdf": essay_pdfs["essay"], "notes.txt": b"final"})
    # A PDF exported again differs in its bytes (dates, ids) but not in its text.
    reexported = essay_pdfs["essay"].replace(b"/Producer", b"/Producex")
    assert compare_zip_files(make_zip(tmp_path / "same.zip", {"notes.txt": b"final", "essay.pdf": reexported}),
                             gold).score == 1.0
    draft = make_zip(tmp_path / "draft.zip", {"essay.pdf": essay_pdfs["draft"], "notes.txt": b"final"})
    assert compare_zip_files(draft, gold).score == 0.0
    old_notes = make_zip(tmp_path / "notes.zip", {"essay.pdf": essay_pdfs["essay"], "notes.txt": b"draft"})
    assert compare_zip_files(old_notes, gold).score == 0.0
    assert compare_zip_files(make_zip(tmp_path / "less.zip", {"essay.pdf": essay_pdfs["essay"]}), gold).score == 0.0
    assert compare_zip_files(None, gold).score == 0.0
    assert compare_zip_files(write(tmp_path, "fake.zip", "not a zip"), gold).score == 0.0


def test_compare_result_files_numbers_and_text(tmp_path):
    gold = write(tmp_path, "result_gold.txt", "3.1416\n")
    assert compare_result_files(write(tmp_path, "a.txt", "3.14160000001"), gold).score == 1.0
    assert compare_result_files(write(tmp_path, "b.txt", "The result is 3.1416"), gold).score == 1.0
    assert compare_result_files(write(tmp_path, "c.txt", "3.15"), gold).score == 0.0
    assert compare_result_files(write(tmp_path, "d.txt", "pi"), gold).score == 0.0
    text_gold = write(tmp_path, "text_gold.txt", "Hello\n")
    assert compare_result_files(write(tmp_path, "e.txt", "Hello"), text_gold).score == 1.0
    assert compare_result_files(None, gold).score == 0.0


def test_check_html_background_image(tmp_path):
    page = write(tmp_path, "index.html", "<html><head><style>body { background-image: url('bg.jpg'); }</style>"
                                         "</head><body></body></html>")
    assert check_html_background_image(page, {"value": "bg.jpg"}).score == 1.0
    assert check_html_background_image(page, {"value": "other.png"}).score == 0.0
    assert check_html_background_image(None, {"value": "bg.jpg"}).score == 0.0


SNAKE = "class Snake:\n    def __init__(self):\n        self.body = [(5, 5), (4, 5)]\n\n    def grow(self):\n" \
        "        self.body.append(self.body[-1])\n"
BROKEN_SNAKE = SNAKE.replace("self.body.append(self.body[-1])", "pass")
TEST_SUITE = """from snake import Snake

def test():
    snake = Snake()
    snake.grow()
    print("checked growth")
    return len(snake.body) == 3
"""


def cache_dir(tmp_path, snake_source: str, suite: str = TEST_SUITE) -> tuple[list[str], str]:
    """The agent's files and the gold test suite, fetched side by side as the getters do."""
    return [write(tmp_path, "snake.py", snake_source)], write(tmp_path, "test_suite.py", suite)


def test_check_python_file_by_test_suite_passes(tmp_path):
    assert check_python_file_by_test_suite(*cache_dir(tmp_path, SNAKE)).score == 1.0


def test_check_python_file_by_test_suite_fails(tmp_path):
    assert check_python_file_by_test_suite(*cache_dir(tmp_path, BROKEN_SNAKE)).score == 0.0


def test_check_python_file_by_test_suite_crash_or_missing_files_score_0(tmp_path):
    files, suite = cache_dir(tmp_path, "class Snake(:\n")  # the agent left a syntax error
    assert check_python_file_by_test_suite(files, suite).score == 0.0
    assert check_python_file_by_test_suite(files, None).score == 0.0
    assert check_python_file_by_test_suite(None, suite).score == 0.0
    assert check_python_file_by_test_suite(files, suite, test_function_name="no_such_test").score == 0.0


def test_check_python_file_by_test_suite_timeout(tmp_path):
    files, suite = cache_dir(tmp_path, SNAKE, suite="import time\n\ndef test():\n    time.sleep(30)\n    return True\n")
    assert check_python_file_by_test_suite(files, suite, timeout=1).score == 0.0



GOLD_PROGRAM = '''"""Sums the squares."""


def total(numbers):
    """The sum of the squares."""
    return sum(n * n for n in numbers)


print(total([1, 2, 3]))
'''


def test_check_python_file_by_gold_file_compares_programs_not_their_layout(tmp_path):
    gold = write(tmp_path, "gold.py", GOLD_PROGRAM)
    relaid = write(tmp_path, "relaid.py", "def total( numbers ):  # squares\n"
                                          "    return sum(n*n for n in numbers)\nprint(total([1,2,3]))\n")
    different = write(tmp_path, "different.py", GOLD_PROGRAM.replace("n * n", "n + n"))
    broken = write(tmp_path, "broken.py", "def total(:\n")
    assert check_python_file_by_gold_file(relaid, gold).score == 1.0
    assert check_python_file_by_gold_file([relaid, different], gold).score == 1.0  # the first fetched file counts
    assert check_python_file_by_gold_file(different, gold).score == 0.0
    assert check_python_file_by_gold_file(broken, gold).score == 0.0
    assert check_python_file_by_gold_file(None, gold).score == 0.0
    assert check_python_file_by_gold_file(relaid, str(tmp_path / "no-gold.py")).score == 0.0
