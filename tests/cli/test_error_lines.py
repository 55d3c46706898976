"""Every error `arena` shows has one shape (arena/errors.py): `arena: error: ...` on one line
and exit code 2 for a user's mistake, `arena: internal error: ...` and 1 for arena's own
failure; never a traceback. These commands printed their errors their own way (`arena new`,
`arena images`) or not at all (`arena authors`: a traceback) before `ArenaError`."""

from __future__ import annotations


from arena.langs.kits import available
from arena.sandbox.languages import LANGUAGES
from tests.command import arena


def test_a_kit_that_does_not_exist_is_one_arena_error_line(tmp_path):
    run = arena("new", "my-bot", "--language", "cobol", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"arena: error: no starter kit for 'cobol'; kits: {', '.join(available())}\n"
    assert not (tmp_path / "my-bot").exists()


def test_a_kit_into_a_folder_that_holds_files_is_one_arena_error_line(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine\n")
    run = arena("new", "taken", "--language", "python", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == f"arena: error: {tmp_path / 'taken'} already exists and is not an empty folder; choose a new folder\n"
    assert sorted(path.name for path in (tmp_path / "taken").iterdir()) == ["notes.txt"]


def test_an_image_for_a_language_arena_has_none_for_is_one_arena_error_line(tmp_path):
    run = arena("images", "build", "cobol", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == f"arena: error: unknown language 'cobol'; allowed: {', '.join(LANGUAGES)}\n"


def test_no_docker_engine_is_an_internal_error_line_and_exit_1(tmp_path):
    run = arena("images", "list", cwd=tmp_path, env={"DOCKER_HOST": f"unix://{tmp_path / 'no-engine.sock'}"})
    assert run.returncode == 1
    assert run.stderr.startswith("arena: internal error: the Docker engine is not reachable (")
    assert run.stderr.endswith("); start it (.ci/docker-up)\n") and run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr


def test_an_author_added_twice_is_one_arena_error_line_not_a_traceback(tmp_path):
    first = arena("authors", "add", "ann", "--registry", str(tmp_path / "registry"), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = arena("authors", "add", "ann", "--registry", str(tmp_path / "registry"), cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr == "arena: error: author ann exists; `arena authors rotate ann` gives them a new token\n"


def test_an_author_of_no_account_is_one_arena_error_line(tmp_path):
    run = arena("authors", "revoke", "bob", "--registry", str(tmp_path / "registry"), cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == (
        "arena: error: no author bob; `arena authors list` shows them, `arena authors add bob` makes one\n"
    )
