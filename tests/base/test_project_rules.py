"""Project identity rules, each on its own (the mutation run's targets in lib/agentctx/project.py): which remote
names a project, which folder a hook works in, what a project is called, and when two identities are equal.

Fast unit tests on fake checkouts (a ``.git`` folder with a config file); tests/base/test_project.py covers real git."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from agentctx import project
from tests.conftest import make_repo


def _id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def write_config(repo: Path, text: str) -> Path:
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "config").write_text(text)
    return repo


# ---------------------------------------------------------------- which remote names the project


def test_a_submodule_url_in_the_config_is_not_a_remote(tmp_path: Path):
    """``.git/config`` lists submodules with a ``url =`` too: a repository with submodules but no remote is
    identified by its folder, never by a submodule's remote."""
    repo = write_config(tmp_path / "app", '[core]\n\tbare = false\n'
                                           '[submodule "vendor/lib"]\n\turl = git@github.com:other/lib.git\n')
    p = project.detect(str(repo))
    assert p.remote is None
    assert p.id == _id("path:" + os.path.normcase(str(repo)))


def test_a_submodule_before_the_only_remote_does_not_take_its_place(tmp_path: Path):
    repo = write_config(tmp_path / "app", '[submodule "vendor/lib"]\n\turl = git@github.com:other/lib.git\n'
                                           '[remote "upstream"]\n\turl = git@github.com:acme/app.git\n')
    assert project.detect(str(repo)).remote == "github.com/acme/app"


def test_a_remote_with_two_urls_is_known_by_its_first(tmp_path: Path):
    """git fetches from a remote's first ``url``; a second one (a mirror) does not change the project."""
    repo = write_config(tmp_path / "app", '[remote "origin"]\n\turl = git@github.com:acme/app.git\n'
                                           '\turl = git@mirror.example.com:acme/app-mirror.git\n')
    assert project.detect(str(repo)).remote == "github.com/acme/app"


def test_a_url_after_the_remote_section_ends_belongs_to_no_remote(tmp_path: Path):
    repo = write_config(tmp_path / "app", '[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
                                           '[branch "main"]\n\turl = git@github.com:wrong/place.git\n')
    assert project.detect(str(repo)).remote is None


def test_a_quoted_url_is_unquoted(tmp_path: Path):
    repo = write_config(tmp_path / "app", '[remote "origin"]\n\turl = "https://github.com/acme/app.git"\n')
    assert project.detect(str(repo)).remote == "github.com/acme/app"


def test_a_repository_without_a_config_file_is_identified_by_its_folder(tmp_path: Path):
    """A ``.git`` folder with no readable config (a clone in progress): no remote, no error."""
    repo = tmp_path / "fresh"
    (repo / ".git").mkdir(parents=True)
    p = project.detect(str(repo))
    assert (p.remote, p.name, p.root) == (None, "fresh", str(repo))
    assert p.id == _id("path:" + os.path.normcase(str(repo)))


# ---------------------------------------------------------------- remote spellings


def test_a_remote_at_a_hosts_root_is_the_host():
    assert project.normalize_remote("https://git.example.com") == "git.example.com"
    assert project.normalize_remote("https://git.example.com/") == "git.example.com"
    assert project.normalize_remote("ssh://git@git.example.com:2222") == "git.example.com"


def test_a_windows_drive_path_is_a_local_path_not_a_host_named_c():
    out = project.normalize_remote("C:/repos/widgets")
    assert out.startswith("path:") and out.endswith("C:/repos/widgets")
    assert project.normalize_remote("D:\\repos\\widgets").startswith("path:")


def test_a_path_with_a_scheme_is_never_read_as_host_colon_path():
    """``host:path`` is scp syntax only without ``://`` (``file://`` is a URL, not host "file")."""
    assert project.normalize_remote("ssh://git@github.com:22/acme/widgets.git") == "github.com/acme/widgets"
    assert project.normalize_remote("git.example.com:acme/app.git") == "git.example.com/acme/app"


# ---------------------------------------------------------------- what the project is called


def test_a_project_with_a_remote_is_named_after_the_remote_not_the_folder(tmp_path: Path):
    repo = make_repo(tmp_path / "checkout-2", "git@github.com:acme/widgets.git")
    p = project.detect(str(repo))
    assert (p.name, p.root) == ("widgets", str(repo))


def test_a_remote_at_a_hosts_root_names_the_project_after_the_host(tmp_path: Path):
    repo = make_repo(tmp_path / "site", "https://git.example.com/")
    p = project.detect(str(repo))
    assert (p.name, p.remote) == ("git.example.com", "git.example.com")
    assert p.id == _id("git.example.com")


def test_a_folder_outside_git_is_named_after_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.chdir(tmp_path)  # the process works elsewhere: the folder given decides
    p = project.detect(str(notes))
    assert (p.name, p.root, p.remote) == ("notes", str(notes), None)


# ---------------------------------------------------------------- the folder a hook works in


def test_the_given_folder_wins_over_claude_project_dir_and_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    given, env_dir, cwd = tmp_path / "given", tmp_path / "env", tmp_path / "cwd"
    for d in (given, env_dir, cwd):
        d.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(env_dir))
    monkeypatch.chdir(cwd)
    assert project.working_dir(str(given)) == str(given)


def test_claude_project_dir_is_used_when_the_given_folder_is_missing_or_a_file(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    env_dir, cwd = tmp_path / "env", tmp_path / "cwd"
    env_dir.mkdir()
    cwd.mkdir()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(env_dir))
    monkeypatch.chdir(cwd)
    assert project.working_dir(None) == str(env_dir)
    assert project.working_dir("") == str(env_dir)
    assert project.working_dir(str(a_file)) == str(env_dir)
    assert project.working_dir(str(tmp_path / "gone")) == str(env_dir)


def test_the_process_directory_is_the_last_resort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    assert project.working_dir(None) == os.getcwd() == str(cwd)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "gone"))
    assert project.working_dir(str(tmp_path / "also-gone")) == str(cwd)


# ---------------------------------------------------------------- identity equality


def test_two_detections_of_one_checkout_are_equal_and_hash_alike(tmp_path: Path):
    repo = make_repo(tmp_path / "widgets")
    (repo / "src").mkdir()
    a, b = project.detect(str(repo)), project.detect(str(repo / "src"))
    assert a == b and not (a != b) and hash(a) == hash(b)
    assert len({a, b}) == 1


def test_a_project_is_never_equal_to_something_that_is_not_a_project(tmp_path: Path):
    p = project.detect(str(make_repo(tmp_path / "widgets")))
    assert p != "widgets" and p != None and p != (p.id, p.root)  # noqa: E711


def test_two_worktrees_of_one_project_share_an_id_but_are_not_the_same_identity(tmp_path: Path):
    a = project.detect(str(make_repo(tmp_path / "a", "git@github.com:acme/widgets.git")))
    b = project.detect(str(make_repo(tmp_path / "b", "git@github.com:acme/widgets.git")))
    assert a.id == b.id and a != b


# ---------------------------------------------------------------- the sha256 fallback


def test_ids_are_the_same_when_the_builtin_sha256_modules_are_missing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    """An interpreter built without ``_sha2`` / ``_sha256`` falls back to hashlib: the module still imports and
    gives every project the id it has elsewhere (ids are shared across machines)."""
    monkeypatch.setitem(sys.modules, "_sha2", None)  # None in sys.modules: importing it raises ImportError
    monkeypatch.setitem(sys.modules, "_sha256", None)
    spec = importlib.util.spec_from_file_location("agentctx_project_without_builtin_sha", project.__file__)
    fallback = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fallback)
    assert fallback.sha256 is hashlib.sha256
    repo = make_repo(tmp_path / "widgets")
    assert fallback.detect(str(repo)).id == project.detect(str(repo)).id == _id("github.com/acme/widgets")
