"""The cache: the platform's cache folder unless $SHARDLOG_CACHE, bounded in size (least
recently used entries go first), and `shardlog cache clear` / `info`."""

from __future__ import annotations

import os

from click.testing import CliRunner

from analyzer import cache
from analyzer.cli import main


def test_the_default_folder_is_the_platforms_user_cache_folder(monkeypatch, tmp_path):
    import platformdirs

    monkeypatch.delenv("SHARDLOG_CACHE", raising=False)
    assert cache.cache_dir() == type(cache.cache_dir())(platformdirs.user_cache_dir("shardlog", appauthor=False))
    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path))
    assert cache.cache_dir() == tmp_path


def _entry(i: int) -> str:
    return f"{i:032x}"


def test_the_folder_is_trimmed_least_recently_used_first(monkeypatch, tmp_path):
    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path))
    monkeypatch.setenv("SHARDLOG_CACHE_MAX_MB", str(2500 / 2**20))  # room for two 1 kB entries
    (tmp_path / "notes.txt").write_text("x" * 5000)  # not an entry: never removed nor counted
    for i in range(2):
        assert cache.cached("blob", _entry(i), lambda: b"y" * 1000) == b"y" * 1000
        os.utime(tmp_path / f"blob-{_entry(i)}.pickle", (1000 + i, 1000 + i))  # stored long ago, 0 first

    def unbuilt():
        raise AssertionError("read from the cache, not built")

    assert cache.cached("blob", _entry(0), unbuilt) == b"y" * 1000  # entry 0 read again: recently used
    cache.cached("blob", _entry(2), lambda: b"z" * 1000)  # a third entry: one must go
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"blob-{_entry(0)}.pickle", f"blob-{_entry(2)}.pickle", "notes.txt"]


def test_cache_clear_and_info(monkeypatch, tmp_path):
    monkeypatch.setenv("SHARDLOG_CACHE", str(tmp_path))
    cache.cached("blob", _entry(1), lambda: b"y" * 100)
    (tmp_path / f"blob-{_entry(2)}.123.tmp").write_bytes(b"partial")  # left by a stopped store
    (tmp_path / "keep.pickle").write_bytes(b"not ours")
    info = CliRunner().invoke(main, ["cache", "info"])
    assert info.exit_code == 0 and info.output.startswith(f"{tmp_path}: 1 entries"), info.output
    result = CliRunner().invoke(main, ["cache", "clear"])
    assert result.exit_code == 0 and result.output.startswith("removed 2 entries"), result.output
    assert [p.name for p in tmp_path.iterdir()] == ["keep.pickle"]
