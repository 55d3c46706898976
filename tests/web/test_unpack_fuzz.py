"""Whatever an upload holds, the unpacker answers with a refusal or a bot folder, never
anything else (issue 35: a zip with an empty entry name raised IndexError in the worker,
an HTTP 500). Random bytes behind each archive's magic, archives built with arbitrary
names, kinds, modes and flags, and valid archives with bytes changed or cut: `unpack`
returns a folder inside its destination or raises UploadRefused with a 4xx status and
leaves nothing; the worker's whole job (`intake._open`: the form, the archive, bot.toml)
answers "opened" or "refused" with a 4xx, never arena's own failure."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from arena.web.intake import _open
from arena.web.unpack import UploadLimits, UploadRefused, unpack

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")  # zips built with a name twice
LIMITS = UploadLimits(unpacked_mb=1, files=40, file_mb=1)
FUZZ = settings(  # more examples find nothing more (2,000 each, run twice)
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "/", ".", "./", "..", "a/..", "/a", "a//b", "a/./b", "./bot.toml", "a\\b", "a\x00b",
                     "top/", "top/bot.toml", "bot.toml", "x" * 300, "a/" * 40 + "f", "é/ü.py"]),
)
tar_names = names | st.sampled_from(["\udcff", "a/\udcff.py"])  # bytes not UTF-8 (a zip cannot hold them)
payloads = st.binary(max_size=300)


def unpacked_or_refused(data: bytes) -> None:
    """The rule itself: a folder inside the destination, or a 4xx refusal leaving nothing."""
    with tempfile.TemporaryDirectory() as where:
        archive, dest = Path(where) / "packed", Path(where) / "out"
        archive.write_bytes(data)
        try:
            bot = unpack(archive, dest, LIMITS)
        except UploadRefused as refused:
            assert 400 <= refused.status < 500 and refused.line and "\n" not in refused.line
            assert not dest.exists()
            return
        assert bot == dest or bot.parent == dest
        assert bot.resolve().is_relative_to(dest.resolve())


def zip_of(entries: list[tuple[str, bytes, int, int, int]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as packed:
        for name, data, mode, flags, method in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = method
            packed.writestr(info, data)
            info.flag_bits |= flags
    return buffer.getvalue()


def tar_of(entries: list[tuple[str, bytes, bytes, int, str]], compressed: bool) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, kind, mode, linkname in entries:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.linkname = kind, mode, linkname
            if kind in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE):
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    raw = buffer.getvalue()
    return gzip.compress(raw) if compressed else raw


def changed(data: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    """`data` with bytes replaced at (position, value) pairs and cut at `cut`."""
    mutable = bytearray(data)
    for position, value in edits:
        if mutable:
            mutable[position % len(mutable)] = value
    return bytes(mutable[:cut] if cut is not None else mutable)


zip_entries = st.lists(
    st.tuples(names, payloads, st.sampled_from([0, 0o100644, 0o100755, 0o40755, 0o120777, 0o10644, 0o20644,
                                                 0o170000]),
              st.sampled_from([0, 0x1, 0x8, 0x800]), st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])),
    max_size=6,
)
tar_entries = st.lists(
    st.tuples(tar_names, payloads,
              st.sampled_from([tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
                               tarfile.CHRTYPE, tarfile.FIFOTYPE, tarfile.CONTTYPE, b"Z", b"9"]),
              st.sampled_from([0o644, 0o755, 0, 0o4777]), st.sampled_from(["", "bot.toml", "../x", "/etc/passwd"])),
    max_size=6,
)
edits = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=4)
cuts = st.none() | st.integers(0, 4096)


@FUZZ
@given(magic=st.sampled_from([b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"\x1f\x8b\x08\x00", b""]),
       rest=st.binary(max_size=2048))
def test_any_bytes_behind_an_archives_magic_are_refused_or_unpacked(magic, rest):
    unpacked_or_refused(magic + rest)


@FUZZ
@given(head=st.binary(min_size=257, max_size=257), rest=st.binary(max_size=1024))
def test_any_bytes_that_look_like_a_tar_are_refused_or_unpacked(head, rest):
    unpacked_or_refused(head + b"ustar" + rest)


@FUZZ
@given(entries=zip_entries, edits=edits, cut=cuts)
@example(entries=[("", b"x", 0, 0, zipfile.ZIP_STORED)], edits=[], cut=None)  # the fuzzer's HTTP 500 (issue 35)
@example(entries=[("/", b"", 0, 0, zipfile.ZIP_STORED)], edits=[], cut=None)
@example(entries=[("./", b"x", 0, 0, zipfile.ZIP_STORED)], edits=[], cut=None)
def test_any_zip_is_refused_or_unpacked(entries, edits, cut):
    unpacked_or_refused(changed(zip_of(entries), edits, cut))


@FUZZ
@given(entries=tar_entries, compressed=st.booleans(), edits=edits, cut=cuts)
@example(entries=[("", b"x", tarfile.REGTYPE, 0o644, "")], compressed=True, edits=[], cut=None)
@example(entries=[(".", b"x", tarfile.REGTYPE, 0o644, "")], compressed=False, edits=[], cut=None)
def test_any_tar_is_refused_or_unpacked(entries, compressed, edits, cut):
    unpacked_or_refused(changed(tar_of(entries, compressed), edits, cut))


toml_texts = st.one_of(
    st.text(max_size=200),
    st.builds(lambda name, version, games: f'name = "{name}"\nversion = "{version}"\ncommand = ["python3", "bot.py"]\n'
              f"games = {games}\n", st.text(max_size=20), st.text(max_size=20),
              st.sampled_from(['["3up3down"]', "[]", '"3up3down"', "[1]", '["nope"]'])),
)


@FUZZ
@given(toml=toml_texts, top=st.sampled_from(["", "bot/", "./"]), extra=zip_entries, as_zip=st.booleans(),
       form=st.booleans())
@example(toml="", top="", extra=[("", b"x", 0, 0, zipfile.ZIP_STORED)], as_zip=True, form=False)
def test_the_workers_whole_job_opens_or_refuses_any_upload(toml, top, extra, as_zip, form):
    """What the worker process runs for each upload: opened, or refused with a 4xx."""
    files = [(top + "bot.toml", toml.encode("utf-8", "surrogatepass"), 0o100644, 0, zipfile.ZIP_STORED)]
    files += [(top + name, data, mode, flags, method) for name, data, mode, flags, method in extra]
    if as_zip:
        data = zip_of(files)
    else:
        data = tar_of([(name, payload, tarfile.REGTYPE if not stat.S_ISDIR(mode) else tarfile.DIRTYPE, 0o644, "")
                       for name, payload, mode, _, _ in files], compressed=True)
    content_type = "application/octet-stream"
    if form:
        boundary = "fuzzboundary"
        data = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"bot\"; filename=\"b\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        content_type = f"multipart/form-data; boundary={boundary}"
    with tempfile.TemporaryDirectory() as where:
        work = Path(where) / "work"
        work.mkdir()
        (work / "body").write_bytes(data)
        answer = _open(str(work / "body"), str(work), LIMITS, content_type)
    assert answer[0] in ("opened", "refused"), answer
    if answer[0] == "refused":
        assert 400 <= answer[1] < 500 and "\n" not in answer[2], answer


@pytest.mark.parametrize("name", ["", ".", "./."])
def test_a_zip_file_entry_with_no_name_is_refused_with_one_line(tmp_path, name):
    archive = tmp_path / "bot.zip"
    archive.write_bytes(zip_of([(name, b"x", 0o100644, 0, zipfile.ZIP_STORED),
                                ("bot.toml", b"", 0o100644, 0, zipfile.ZIP_STORED)]))
    with pytest.raises(UploadRefused) as refused:
        unpack(archive, tmp_path / "out", LIMITS)
    assert refused.value.status == 400 and "name" in refused.value.line
    assert not (tmp_path / "out").exists()


@FUZZ
@given(body=st.binary(max_size=600), boundary=st.sampled_from(["b", "fuzzboundary", "x" * 70]),
       framed=st.booleans())
@example(body=b"--b\r\nContent-Disposition: form-data; name=\"bot\"; filename=\"b\"\r\n\r\nU\r\n--b--x",
         boundary="b", framed=False)  # schemathesis's HTTP 500 with python-multipart 0.0.18 (issue 35)
def test_any_bytes_as_a_form_are_refused_or_opened(body, boundary, framed):
    """A form that cannot be parsed is the author's mistake (400), whichever python-multipart
    parses it: 0.0.18 raised its own MultipartParseError past Starlette's parser."""
    if framed:
        body = f"--{boundary}\r\n".encode() + body + f"\r\n--{boundary}--\r\n".encode()
    with tempfile.TemporaryDirectory() as where:
        work = Path(where) / "work"
        work.mkdir()
        (work / "body").write_bytes(body)
        answer = _open(str(work / "body"), str(work), LIMITS, f"multipart/form-data; boundary={boundary}")
    assert answer[0] in ("opened", "refused"), answer
    if answer[0] == "refused":
        assert 400 <= answer[1] < 500 and "\n" not in answer[2], answer
