"""A damaged autosave never stops the start (issue 24, "Recovery that cannot stop the start").

Every field of a recovery metadata file is checked before use; a pair that
fails is set aside (renamed, kept for the user) with one status-bar line and
the window opens as usual. The property test writes real autosaves
(``RecoverySession.write``), damages the metadata or the scene file (a field
replaced by a wrong type, a huge or extreme value, a field removed, random
bytes, a truncation) and starts a real window on each.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from impactgui.mainwindow import MainWindow
from impactgui.recovery import (
    META_SUFFIX,
    SCENE_SUFFIX,
    RecoveredScene,
    RecoveryAnswer,
    RecoveryStore,
)
from tests.gui.conftest import scene_path

META_FIELDS = ("format", "version", "original_path", "title", "saved_at")

EXTREME_TIMES = (
    "9999-12-31T23:59:59-14:00",  # OverflowError at astimezone() before the fix
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59+00:00",
    "0001-01-01T00:00:00+00:00",
    "2024-02-30T00:00:00+00:00",
    "2024-01-01T00:00:00",  # no time zone
    "1969-12-31T23:59:59+00:00",
    "",
    "now",
    "2024-01-01T00:00:00+23:59",
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**300), max_value=10**300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(EXTREME_TIMES),
    st.text(max_size=40),
    st.text(min_size=5000, max_size=20000, alphabet="ab\u00e9\u2603"),
    st.sampled_from(["\\ud800", "/", "relative/path", "/tmp/\u0000x", "/" + "a" * 5000]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)


@st.composite
def damages(draw) -> tuple[str, str, object]:
    """(which file, how, what): one damage to a fresh autosave pair."""
    target = draw(st.sampled_from(["meta", "scene"]))
    how = draw(st.sampled_from(["field", "remove", "bytes", "truncate", "whole"]))
    if how == "bytes":
        return target, how, draw(st.binary(max_size=300))
    if how == "truncate":
        return target, how, draw(st.floats(min_value=0.0, max_value=0.99))
    if how == "whole":
        return target, how, draw(json_values)
    if target == "meta":
        field = draw(st.sampled_from(META_FIELDS))
    else:
        field = draw(st.sampled_from(["title", "bodies", "solver", "format", "version", "gravity"]))
    value = draw(json_values) if how == "field" else None
    return target, f"{how}:{field}", value


def _write_pair(directory: Path) -> Path:
    """A real autosave of the bouncing-ball scene, its session ended as by a crash."""
    session = RecoveryStore(directory).open_session()
    data = json.loads(scene_path("bouncing_ball").read_text())
    session.write(data, scene_path("bouncing_ball"))
    session.close()
    return session.scene_file


def _damage(scene_file: Path, damage: tuple[str, str, object]) -> None:
    target, how, value = damage
    path = (
        scene_file
        if target == "scene"
        else scene_file.with_name(scene_file.name.removesuffix(SCENE_SUFFIX) + META_SUFFIX)
    )
    if how == "bytes":
        path.write_bytes(value)
    elif how == "truncate":
        raw = path.read_bytes()
        path.write_bytes(raw[: int(len(raw) * value)])
    elif how == "whole":
        path.write_text(json.dumps(value))
    else:
        kind, field = how.split(":")
        data = json.loads(path.read_text())
        if kind == "remove":
            data.pop(field, None)
        else:
            data[field] = value
        path.write_text(json.dumps(data))


@pytest.fixture
def window_maker(qtbot, settings: QSettings) -> Iterator:
    windows: list[MainWindow] = []

    def make(directory: Path) -> MainWindow:
        win = MainWindow(settings=settings, recovery=RecoveryStore(directory))
        qtbot.addWidget(win, before_close_func=MainWindow.shutdown)
        win.show()
        windows.append(win)
        return win

    yield make
    for win in windows:
        for box in win.findChildren(QMessageBox):
            box.close()


def _one_line_or_none(win: MainWindow) -> str:
    line = win.statusBar().currentMessage()
    assert "\n" not in line
    return line


@pytest.mark.parametrize("saved_at", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_an_autosave_time_past_the_calendar_is_set_aside_and_the_window_opens(
    qtbot, window_maker, tmp_path: Path, saved_at: str
) -> None:
    """The issue's two meta files: the real restore question raised OverflowError before."""
    directory = tmp_path / "recovery"
    scene_file = _write_pair(directory)
    meta_file = scene_file.with_name(scene_file.name.removesuffix(SCENE_SUFFIX) + META_SUFFIX)
    meta = json.loads(meta_file.read_text())
    meta["saved_at"] = saved_at
    meta_file.write_text(json.dumps(meta))
    win = window_maker(directory)
    before = json.loads(json.dumps(win.doc.data))
    shown: list[str] = []

    def answer_later() -> None:  # the real question, if it ever appears
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            shown.append(box.informativeText())
            (later,) = [b for b in box.buttons() if b.text().replace("&", "") == "Not now"]
            later.click()

    QTimer.singleShot(0, answer_later)
    assert not win.offer_recovery()
    assert shown == []  # never asked about a file that cannot be shown
    assert win.doc.data == before
    line = _one_line_or_none(win)
    assert line.startswith(f"damaged autosave set aside: {scene_file.name}")
    assert "saved_at" in line
    assert not scene_file.exists() and not meta_file.exists()
    assert len(list(directory.glob("*.damaged-*"))) == 2  # the scene and its meta, kept
    assert RecoveryStore(directory).pending() == []  # never offered again


def test_a_sound_autosave_is_still_offered_with_its_fields(tmp_path: Path) -> None:
    directory = tmp_path / "recovery"
    scene_file = _write_pair(directory)
    (recovered,) = RecoveryStore(directory).pending()
    assert recovered.scene_file == scene_file
    assert recovered.original_path == scene_path("bouncing_ball").resolve()
    assert recovered.title == json.loads(scene_path("bouncing_ball").read_text())["title"]
    assert abs((datetime.now(UTC) - recovered.saved_at).total_seconds()) < 3600
    text, informative = MainWindow.restore_question(recovered)
    assert recovered.title in text and str(recovered.original_path) in informative


def test_a_missing_meta_file_is_no_damage(tmp_path: Path) -> None:
    """A crash between the two writes leaves the scene alone: it is offered, untitled path."""
    directory = tmp_path / "recovery"
    scene_file = _write_pair(directory)
    scene_file.with_name(scene_file.name.removesuffix(SCENE_SUFFIX) + META_SUFFIX).unlink()
    (recovered,) = RecoveryStore(directory).pending()
    assert recovered.original_path is None


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(damage=damages())
def test_no_damaged_autosave_stops_the_window(qtbot, window_maker, damage) -> None:
    directory = Path(tempfile.mkdtemp(prefix="impactgui-recovery-"))
    try:
        _write_pair(directory)
        _damage(next(directory.glob(f"*{SCENE_SUFFIX}")), damage)
        win = window_maker(directory)
        asked: list[RecoveredScene] = []

        def ask(recovered: RecoveredScene) -> RecoveryAnswer:
            asked.append(recovered)
            MainWindow.restore_question(recovered)  # the real question's text, every field
            return RecoveryAnswer.RESTORE

        win.confirm_restore = ask
        restored = win.offer_recovery()
        QApplication.processEvents()  # draw what was restored
        assert len(asked) <= 1
        line = _one_line_or_none(win)
        if not asked:  # set aside: said on one line, kept on disk
            assert line.startswith("damaged autosave set aside: ")
            assert list(directory.glob("*.damaged-*"))
        elif not restored:  # offered, then refused at restore: kept aside too
            assert list(directory.glob("*.damaged-*"))
        assert RecoveryStore(directory).pending() == []  # never offered again
        win.shutdown()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
