"""paths.data_dir() must be the directory platformdirs gives for user_data_dir("agentctx", appauthor=False).

agentctx computes it with ``os`` alone (platformdirs is too slow to import on the hook hot
path), so these tests pin that rule to platformdirs' own Unix, macOS and Windows classes.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
import platformdirs.windows
import pytest
from platformdirs.macos import MacOS
from platformdirs.unix import Unix

from agentctx import paths


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No overrides, and a fake absolute HOME so nothing depends on the real account."""
    fake_home = tmp_path / "home" / "dev"
    fake_home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(fake_home))
    for name in ("AGENTCTX_HOME", "XDG_DATA_HOME", "LOCALAPPDATA", "WIN_PD_OVERRIDE_LOCAL_APPDATA"):
        monkeypatch.delenv(name, raising=False)
    return fake_home


def _platform(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(paths.sys, "platform", name)


# ---------------------------------------------------------------- Linux (the machine we run on)


def test_linux_default_matches_platformdirs(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _platform(monkeypatch, "linux")
    expected = platformdirs.user_data_dir("agentctx", appauthor=False)
    assert paths.data_dir() == expected
    assert paths.data_dir() == Unix(appname="agentctx", appauthor=False).user_data_dir
    assert paths.data_dir() == str(clean_env / ".local" / "share" / "agentctx")


def test_linux_xdg_data_home_matches_platformdirs(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _platform(monkeypatch, "linux")
    xdg = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    assert paths.data_dir() == platformdirs.user_data_dir("agentctx", appauthor=False)
    assert paths.data_dir() == Unix(appname="agentctx", appauthor=False).user_data_dir
    assert paths.data_dir() == str(xdg / "agentctx")


@pytest.mark.parametrize("value", ["", "   ", "relative/data", "~/data"])
def test_linux_unusable_xdg_data_home_is_ignored_like_platformdirs(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """The XDG spec says relative values are invalid; platformdirs ignores them, and so must we."""
    _platform(monkeypatch, "linux")
    monkeypatch.setenv("XDG_DATA_HOME", value)
    expected = Unix(appname="agentctx", appauthor=False).user_data_dir
    assert expected == str(clean_env / ".local" / "share" / "agentctx")
    assert paths.data_dir() == expected


def test_db_path_and_sub_live_in_the_data_dir(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _platform(monkeypatch, "linux")
    base = str(clean_env / ".local" / "share" / "agentctx")
    assert paths.db_path() == os.path.join(base, "agentctx.db")
    assert paths.sub("digests", "p.json") == os.path.join(base, "digests", "p.json")
    assert not os.path.exists(base), "data_dir() must not create anything"


def test_ensure_creates_nested_directories(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c"
    assert paths.ensure(str(target)) == str(target)
    assert target.is_dir()
    assert paths.ensure(str(target)) == str(target)  # idempotent


# ---------------------------------------------------------------- macOS


def test_macos_default_matches_platformdirs_class(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _platform(monkeypatch, "darwin")
    expected = MacOS(appname="agentctx", appauthor=False).user_data_dir
    assert expected == str(clean_env / "Library" / "Application Support" / "agentctx")
    assert paths.data_dir() == expected


def test_macos_xdg_data_home_matches_platformdirs_class(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """platformdirs' MacOS class gives an absolute $XDG_DATA_HOME precedence over ~/Library."""
    _platform(monkeypatch, "darwin")
    xdg = tmp_path / "xdg-mac"
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    assert paths.data_dir() == MacOS(appname="agentctx", appauthor=False).user_data_dir


def test_macos_relative_xdg_data_home_is_ignored(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _platform(monkeypatch, "darwin")
    monkeypatch.setenv("XDG_DATA_HOME", "not/absolute")
    expected = MacOS(appname="agentctx", appauthor=False).user_data_dir
    assert expected == str(clean_env / "Library" / "Application Support" / "agentctx")
    assert paths.data_dir() == expected


# ---------------------------------------------------------------- Windows (class exercised on POSIX)


def _windows_expected(monkeypatch: pytest.MonkeyPatch) -> str:
    """platformdirs' Windows class, with the shell folder lookup reading LOCALAPPDATA.

    On POSIX ``os.path`` is ``posixpath``, so both sides apply the same normpath/join.
    """

    def from_env(csidl_name: str) -> str:
        assert csidl_name == "CSIDL_LOCAL_APPDATA", csidl_name
        return os.environ["LOCALAPPDATA"]

    monkeypatch.setattr(platformdirs.windows, "get_win_folder", from_env)
    return platformdirs.windows.Windows(appname="agentctx", appauthor=False).user_data_dir


def test_windows_localappdata_matches_platformdirs_class(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _platform(monkeypatch, "win32")
    monkeypatch.setenv("LOCALAPPDATA", "/fake/Users/dev/AppData/Local")
    expected = _windows_expected(monkeypatch)
    assert expected == "/fake/Users/dev/AppData/Local/agentctx"
    assert paths.data_dir() == expected


def test_windows_localappdata_is_normalized_like_platformdirs(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _platform(monkeypatch, "win32")
    monkeypatch.setenv("LOCALAPPDATA", "/fake//Users/dev/./AppData/Local/tmp/../")
    expected = _windows_expected(monkeypatch)
    assert expected == "/fake/Users/dev/AppData/Local/agentctx"
    assert paths.data_dir() == expected


def test_windows_without_localappdata_falls_back_to_home(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # platformdirs would ask the Windows shell here (not possible on this machine); agentctx
    # uses the documented default location under the profile.
    _platform(monkeypatch, "win32")
    assert paths.data_dir() == os.path.join(str(clean_env), "AppData", "Local", "agentctx")


# ---------------------------------------------------------------- AGENTCTX_HOME


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_agentctx_home_overrides_every_platform(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    _platform(monkeypatch, platform)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path / "custom"))
    assert paths.data_dir() == str(tmp_path / "custom")
    assert paths.db_path() == str(tmp_path / "custom" / "agentctx.db")


def test_agentctx_home_relative_and_tilde_become_absolute(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTCTX_HOME", "rel/store")
    assert paths.data_dir() == str(tmp_path / "rel" / "store")
    monkeypatch.setenv("AGENTCTX_HOME", "~/ctx")
    assert paths.data_dir() == str(clean_env / "ctx")


def test_empty_agentctx_home_is_ignored(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _platform(monkeypatch, "linux")
    monkeypatch.setenv("AGENTCTX_HOME", "")
    assert paths.data_dir() == str(clean_env / ".local" / "share" / "agentctx")


# ---------------------------------------------------------------- cache_dir (machine state, e.g. prepared script environments)


@pytest.mark.parametrize("xdg", [None, "relative/cache", "ABSOLUTE"])
def test_cache_dir_matches_platformdirs_on_linux_and_macos(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, xdg: str | None
) -> None:
    monkeypatch.delenv("AGENTCTX_CACHE_DIR", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache") if xdg == "ABSOLUTE" else xdg)
    for name, cls in (("linux", Unix), ("darwin", MacOS)):
        _platform(monkeypatch, name)
        assert paths.cache_dir() == cls(appname="agentctx", appauthor=False).user_cache_dir


def test_cache_dir_on_windows_and_its_override(clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCTX_CACHE_DIR", raising=False)
    _platform(monkeypatch, "win32")
    monkeypatch.setenv("LOCALAPPDATA", "/fake/Users/dev/AppData/Local")
    monkeypatch.setattr(platformdirs.windows, "get_win_folder", lambda name: os.environ["LOCALAPPDATA"])
    assert paths.cache_dir() == platformdirs.windows.Windows(appname="agentctx", appauthor=False).user_cache_dir
    monkeypatch.setenv("AGENTCTX_CACHE_DIR", str(tmp_path / "c"))
    assert paths.cache_dir() == str(tmp_path / "c")
