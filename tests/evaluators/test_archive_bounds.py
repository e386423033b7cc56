"""Archives an agent made are unpacked within bounds, and compare_archive's folder stays inside them.

The bombs are real: a zip64 file of a few hundred kilobytes whose members inflate to 640 MiB
of zeros (one deflate stream, written once and stored under each member's name), archives
with more members than the bound, and a tar.gz whose header declares more than it.
"""
from __future__ import annotations

import io
import json
import os
import struct
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

import pytest

from desktop_env.evaluators.archives import ArchiveTooLarge, Bounds, check_zip_file, unpack
from desktop_env.evaluators.metrics.chrome import compare_archive
from desktop_env.evaluators.metrics.epub import compare_epub, epub_texts
from desktop_env.evaluators.metrics.vscode import compare_zip_files
from desktop_env.safe_paths import UnsafeTaskPath
from desktop_env.tasks import load_task, validate_task

MEMBER = 64 << 20


def zip64_bomb(path: Path, members: int = 10, member_size: int = MEMBER, declared: int | None = None,
               names: str = "zeros{}.bin") -> str:
    """A zip64 archive of `members` deflated members of `member_size` zero bytes each, named by
    `names`; each member's header declares `declared` bytes (default: the truth)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = compressor.compress(bytes(member_size)) + compressor.flush()
    size = member_size if declared is None else declared
    crc = zlib.crc32(bytes(size))
    out, central = io.BytesIO(), io.BytesIO()
    for i in range(members):
        name = names.format(i).encode()
        offset = out.tell()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                              len(name), 20) + name + struct.pack("<HHQQ", 1, 16, size, len(stream)))
        out.write(stream)
        central.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0x21, crc, 0xFFFFFFFF,
                                  0xFFFFFFFF, len(name), 28, 0, 0, 0, 0, 0xFFFFFFFF)
                      + name + struct.pack("<HHQQQ", 1, 24, size, len(stream), offset))
    directory_offset, directory = out.tell(), central.getvalue()
    out.write(directory)
    end64 = out.tell()
    out.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, members, members, len(directory),
                          directory_offset))
    out.write(struct.pack("<IIQI", 0x07064B50, 0, end64, 1))
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
    path.write_bytes(out.getvalue())
    return str(path)


def zip_of(path: Path, members: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return str(path)


def folder_bytes(folder: Path) -> int:
    return sum(os.lstat(os.path.join(p, n)).st_size for p, _, names in os.walk(folder) for n in names)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> str:
    return zip64_bomb(tmp_path_factory.mktemp("bomb") / "bomb.zip")


def test_the_bomb_is_small_and_declares_more_than_the_bound(bomb):
    assert os.path.getsize(bomb) < 1 << 20
    with zipfile.ZipFile(bomb) as zf:  # a zip Python reads, as a desktop's `unzip` would
        assert sum(i.file_size for i in zf.infolist()) == 10 * MEMBER
        assert zf.open("zeros3.bin").read(1 << 20) == bytes(1 << 20)


def test_a_zip64_bomb_is_refused_before_anything_is_written(bomb, tmp_path):
    with pytest.raises(ArchiveTooLarge, match=r"bomb.zip declares 10 members of 640.0 MiB, past the bound of "
                                              r"512.0 MiB and 10000 members: not unpacked"):
        unpack(bomb, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_compare_archive_scores_an_agents_bomb_0_with_the_reason(bomb, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where compare_archive unpacks: nothing may land there
    monkeypatch.setattr(tempfile, "tempdir", None)
    gold = zip_of(tmp_path / "gold.zip", {"zeros0.bin": "x"})
    result = compare_archive(bomb, gold, file_type="text")
    assert result.score == 0.0
    assert "result archive bomb.zip declares 10 members of 640.0 MiB" in result.explanation
    assert folder_bytes(tmp_path) == os.path.getsize(gold)


def test_a_gold_archive_past_the_bound_is_a_task_error(bomb, tmp_path):
    agent = zip_of(tmp_path / "agent.zip", {"a.txt": "x"})
    with pytest.raises(ArchiveTooLarge, match="expected archive bomb.zip"):
        compare_archive(agent, bomb)


def test_compare_zip_files_refuses_a_bomb_without_reading_it(bomb, tmp_path):
    gold = zip_of(tmp_path / "gold.zip", {f"zeros{i}.bin": "" for i in range(10)})
    result = compare_zip_files(bomb, gold)
    assert result.score == 0.0 and "declares 10 members of 640.0 MiB" in result.explanation


def test_an_office_document_or_book_past_the_bound_is_not_read_into_memory(tmp_path):
    book = zip64_bomb(tmp_path / "book.epub", names="OEBPS/chapter{}.xhtml")
    gold = zip_of(tmp_path / "gold.epub", {"OEBPS/chapter0.xhtml": "<html><body>x</body></html>"})
    assert compare_epub(book, gold).score == 0.0
    assert epub_texts(book) is None
    with pytest.raises(ArchiveTooLarge, match="book.epub declares 10 members"):
        check_zip_file(book)
    check_zip_file(gold)
    check_zip_file(__file__)  # not a zip: its own reader refuses it


def test_a_member_that_inflates_past_its_declared_size_is_cut_there(tmp_path):
    liar = zip64_bomb(tmp_path / "liar.zip", members=1, member_size=8 << 20, declared=1024)
    try:
        unpack(liar, str(tmp_path / "out"))
    except zipfile.BadZipFile:
        pass  # the CRC of the first 1024 bytes may not match: refused as corrupt either way
    assert folder_bytes(tmp_path / "out") <= 1024


def test_writing_stops_at_the_bound_whatever_is_declared(tmp_path):
    archive = zip_of(tmp_path / "two.zip", {"a.txt": "a" * 3000, "b.txt": "b" * 3000})
    with pytest.raises(ArchiveTooLarge, match="4.0 KiB|declares 2 members"):
        unpack(archive, str(tmp_path / "out"), Bounds(max_bytes=4096))


def test_too_many_members_are_refused_in_a_zip_and_a_tar(tmp_path):
    bounds = Bounds(max_members=50)
    many_zip = zip_of(tmp_path / "many.zip", {f"f{i}": "" for i in range(51)})
    with pytest.raises(ArchiveTooLarge, match="declares 51 members"):
        unpack(many_zip, str(tmp_path / "zip"), bounds)
    with tarfile.open(tmp_path / "many.tar.gz", "w:gz") as tf:
        for i in range(51):
            tf.addfile(tarfile.TarInfo(f"f{i}"), io.BytesIO(b""))
    with pytest.raises(ArchiveTooLarge, match="holds at least 51 members"):
        unpack(str(tmp_path / "many.tar.gz"), str(tmp_path / "tar"), bounds)
    assert len(os.listdir(tmp_path / "tar")) == 50


def test_a_tar_header_declaring_too_much_is_refused_before_its_data_is_read(tmp_path):
    header = tarfile.TarInfo("huge.bin")
    header.size = 600 << 20
    with open(tmp_path / "huge.tar.gz", "wb") as f:  # the header and 1 MiB of the promised data
        f.write(zlib.compress(header.tobuf() + bytes(1 << 20), wbits=31))
    with pytest.raises(ArchiveTooLarge, match="huge.tar.gz holds at least 1 members of 600.0 MiB"):
        unpack(str(tmp_path / "huge.tar.gz"), str(tmp_path / "out"))
    assert folder_bytes(tmp_path / "out") == 0 if (tmp_path / "out").exists() else True


def test_member_names_never_leave_the_folder(tmp_path):
    archive = zip_of(tmp_path / "names.zip", {"../escape.txt": "a", "/abs/olute.txt": "b", "ok/x.txt": "c"})
    unpack(archive, str(tmp_path / "out"))
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.txt")) == \
        ["abs/olute.txt", "escape.txt", "ok/x.txt"]
    assert not (tmp_path / "escape.txt").exists()
    with tarfile.open(tmp_path / "names.tar", "w") as tf:
        tf.addfile(tarfile.TarInfo("../escape.txt"), io.BytesIO(b""))
    with pytest.raises(tarfile.TarError):
        unpack(str(tmp_path / "names.tar"), str(tmp_path / "tar"))
    assert not (tmp_path / "escape.txt").exists()


# -- compare_archive's file_path stays inside the unpacked folder --------------------------------

@pytest.mark.parametrize("file_path", ["/etc", "../../..", "lecture_slides/../../../etc"])
def test_compare_archive_refuses_a_folder_outside_the_archive(tmp_path, file_path):
    gold = zip_of(tmp_path / "gold.zip", {"a.txt": "x"})
    with pytest.raises(UnsafeTaskPath, match=r"options.file_path = .* (absolute|'\.\.')"):
        compare_archive(gold, gold, file_path=file_path)


def test_validation_names_the_file_field_and_value_of_an_escaping_folder(tmp_path):
    path = tmp_path / "examples" / "os" / "t1.json"
    path.parent.mkdir(parents=True)
    evaluator = {"func": "compare_archive", "result": {"type": "vm_file", "path": "/home/user/a.zip", "dest": "a.zip"},
                 "expected": {"type": "vm_file", "path": "/home/user/b.zip", "dest": "b.zip"}}
    for value in ("/etc", "../../etc", "ok/sub"):
        path.write_text(json.dumps({"id": "t1", "instruction": "Zip it.", "config": [],
                                    "evaluator": {**evaluator, "options": {"file_path": value}}}))
        problems = [p for p in validate_task(load_task(path, check_paths=False))]
        if value == "ok/sub":
            assert problems == []
            continue
        assert [(p.field, p.name) for p in problems] == [("evaluator.options.file_path", value)]
        assert str(path) in str(problems[0]) and "unpacked archive" in str(problems[0])
