"""Crash recovery: the unsaved scene is autosaved, a crashed session's scene is offered back.

Also: a solver error mid-run leaves the scene untouched, editable and its
autosave in place (issue 4, "a crash or a solver error never loses the scene").
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

import impactgui.mainwindow as mainwindow_module
from impactgui.commands import SetProperty
from impactgui.mainwindow import AUTOSAVE_DELAY_MS, MainWindow
from impactgui.recovery import (
    META_SUFFIX,
    RECOVERY_DIR_ENV,
    SCENE_SUFFIX,
    RecoveredScene,
    RecoveryAnswer,
    RecoveryStore,
    default_recovery_dir,
)
from solver.scene import SceneError, load_scene
from tests.gui.conftest import run_to_end, scene_path
from tests.gui.test_run import FailingStepper

ROOT = Path(__file__).resolve().parents[2]
Answer = QMessageBox.StandardButton


class RestorePrompt:
    """Stands in for the recovery dialog: records what it was shown, gives a fixed answer."""

    def __init__(self, answer: RecoveryAnswer) -> None:
        self.answer = answer
        self.shown: list[RecoveredScene] = []

    def __call__(self, recovered: RecoveredScene) -> RecoveryAnswer:
        self.shown.append(recovered)
        return self.answer


def _no_discard_prompt() -> QMessageBox.StandardButton:
    pytest.fail("the unsaved-changes prompt appeared unexpectedly")


def _no_restore_prompt(_recovered: RecoveredScene) -> RecoveryAnswer:
    pytest.fail("the recovery prompt appeared unexpectedly")


@pytest.fixture
def recovery_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recovery directory, chosen through the environment variable."""
    directory = tmp_path / "recovery"
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(directory))
    return directory


@pytest.fixture
def make_window(
    qtbot, settings: QSettings, recovery_dir: Path
) -> Iterator[Callable[[], MainWindow]]:
    """Makes shown windows that autosave quickly.

    Each is shut down before pytest-qt closes it, so a window left with
    unsaved changes does not prompt (and keeps its recovery file, in ``tmp_path``).
    """
    windows: list[MainWindow] = []  # strong references until the test is over

    def make() -> MainWindow:
        win = MainWindow(settings=settings, recovery=RecoveryStore())
        win.confirm_discard = _no_discard_prompt
        win.confirm_restore = _no_restore_prompt
        win.autosave_timer.setInterval(30)
        qtbot.addWidget(win, before_close_func=MainWindow.shutdown)
        win.show()
        qtbot.waitExposed(win)
        windows.append(win)
        return win

    yield make


@pytest.fixture
def scene_file(tmp_path: Path) -> Path:
    """A copy of the bouncing-ball scene the user edits."""
    path = tmp_path / "ball.json"
    path.write_text(scene_path("bouncing_ball").read_text())
    return path


def _recovery_files(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{SCENE_SUFFIX}")) if directory.exists() else []


def _edited(qtbot, win: MainWindow, directory: Path) -> dict:
    """Edit the window's scene twice, wait for the autosave; the edited scene."""
    win.doc.push(SetProperty(win.doc, ("title",), "Edited ball"))
    win.doc.push(SetProperty(win.doc, ("bodies", 0, "mass"), 2.5))
    qtbot.waitUntil(
        lambda: [json.loads(f.read_text()) for f in _recovery_files(directory)] == [win.doc.data],
        timeout=3000,
    )
    return copy.deepcopy(win.doc.data)


def test_the_recovery_directory_comes_from_the_environment(recovery_dir: Path) -> None:
    assert default_recovery_dir() == recovery_dir
    assert RecoveryStore().directory == recovery_dir


def test_an_edit_is_autosaved_as_a_scene_file_after_a_quiet_time(
    qtbot, make_window, recovery_dir: Path, scene_file: Path
) -> None:
    win = make_window()
    assert win.open_file(scene_file)
    assert not recovery_dir.exists()  # a clean scene writes nothing
    win.autosave_timer.setInterval(AUTOSAVE_DELAY_MS)
    win.doc.push(SetProperty(win.doc, ("title",), "first"))
    assert win.autosave_timer.isActive() and not _recovery_files(recovery_dir)
    win.autosave_timer.setInterval(30)
    edited = _edited(qtbot, win, recovery_dir)
    (recovered_file,) = _recovery_files(recovery_dir)
    assert load_scene(recovered_file).title == "Edited ball"  # a valid scene file
    meta = json.loads(
        recovered_file.with_name(recovered_file.name.replace(SCENE_SUFFIX, META_SUFFIX)).read_text()
    )
    assert meta["original_path"] == str(scene_file.resolve())
    assert meta["title"] == "Edited ball"
    assert not list(recovery_dir.glob("*.tmp"))
    assert json.loads(recovered_file.read_text()) == edited


@pytest.mark.parametrize("way", ["save", "undo", "discard at close", "new after discard"])
def test_the_recovery_file_goes_when_nothing_is_unsaved(
    qtbot, make_window, recovery_dir: Path, scene_file: Path, way: str
) -> None:
    win = make_window()
    assert win.open_file(scene_file)
    _edited(qtbot, win, recovery_dir)
    if way == "save":
        assert win.save()
        assert json.loads(scene_file.read_text())["title"] == "Edited ball"
    elif way == "undo":
        win.doc.undo_stack.undo()
        win.doc.undo_stack.undo()
    else:
        win.confirm_discard = lambda: Answer.Discard
        assert win.close() if way == "discard at close" else win.new_scene()
    assert not win.doc.is_dirty or way == "discard at close"
    assert _recovery_files(recovery_dir) == []
    assert not list(recovery_dir.glob(f"*{META_SUFFIX}"))
    qtbot.wait(100)  # no late autosave brings it back
    assert _recovery_files(recovery_dir) == []


def test_a_clean_exit_leaves_nothing_and_a_new_window_asks_nothing(
    make_window, recovery_dir: Path, scene_file: Path
) -> None:
    win = make_window()
    assert win.open_file(scene_file)
    assert win.close()
    assert not recovery_dir.exists()
    assert not make_window().offer_recovery()


def test_after_a_crash_the_next_window_restores_the_exact_scene_unsaved(
    qtbot, make_window, recovery_dir: Path, scene_file: Path
) -> None:
    crashed = make_window()
    assert crashed.open_file(scene_file)
    edited = _edited(qtbot, crashed, recovery_dir)
    assert not make_window().offer_recovery()  # a live window's autosave is not offered
    crashed.shutdown()  # ends without close: no prompt, no clean-up

    win = make_window()
    prompt = win.confirm_restore = RestorePrompt(RecoveryAnswer.RESTORE)
    assert win.offer_recovery()
    (shown,) = prompt.shown
    assert shown.original_path == scene_file.resolve() and shown.title == "Edited ball"
    assert win.doc.data == edited
    assert win.doc.is_dirty and win.isWindowModified()
    assert win.doc.path is None  # Save asks where: the stored original path is not trusted
    # the crashed session's file is gone, this window's autosave holds the scene
    (own,) = _recovery_files(recovery_dir)
    assert own != shown.scene_file and json.loads(own.read_text()) == edited
    assert json.loads(scene_file.read_text())["title"] != "Edited ball"
    assert win.save_as(scene_file)
    assert load_scene(scene_file).title == "Edited ball"
    assert _recovery_files(recovery_dir) == []


def test_a_restored_scene_stays_unsaved_when_its_edits_are_undone(
    qtbot, make_window, recovery_dir: Path, scene_file: Path
) -> None:
    crashed = make_window()
    assert crashed.open_file(scene_file)
    edited = _edited(qtbot, crashed, recovery_dir)
    crashed.shutdown()
    win = make_window()
    win.confirm_restore = RestorePrompt(RecoveryAnswer.RESTORE)
    assert win.offer_recovery()
    win.doc.push(SetProperty(win.doc, ("title",), "more"))
    win.doc.undo_stack.undo()
    assert win.doc.is_dirty and win.doc.data == edited
    qtbot.wait(100)
    assert [json.loads(f.read_text()) for f in _recovery_files(recovery_dir)] == [edited]


@pytest.mark.parametrize("answer", [RecoveryAnswer.DISCARD, RecoveryAnswer.LATER])
def test_discard_deletes_the_recovered_scene_and_later_keeps_it(
    qtbot, make_window, recovery_dir: Path, scene_file: Path, answer: RecoveryAnswer
) -> None:
    crashed = make_window()
    assert crashed.open_file(scene_file)
    _edited(qtbot, crashed, recovery_dir)
    crashed.shutdown()
    win = make_window()
    prompt = win.confirm_restore = RestorePrompt(answer)
    assert not win.offer_recovery()
    assert len(prompt.shown) == 1
    assert not win.doc.is_dirty and win.doc.path is None
    left = _recovery_files(recovery_dir)
    assert left == ([] if answer == RecoveryAnswer.DISCARD else [prompt.shown[0].scene_file])


def test_an_invalid_mid_edit_scene_is_recovered_with_its_problems_listed(
    qtbot, make_window, recovery_dir: Path, scene_file: Path
) -> None:
    crashed = make_window()
    assert crashed.open_file(scene_file)
    crashed.doc.push(SetProperty(crashed.doc, ("bodies", 0, "mass"), -1))
    crashed.doc.push(SetProperty(crashed.doc, ("bodies", 0, "colour"), "red"))
    invalid = copy.deepcopy(crashed.doc.data)
    assert crashed.doc.problems()
    qtbot.waitUntil(lambda: bool(_recovery_files(recovery_dir)), timeout=3000)
    (raw,) = _recovery_files(recovery_dir)
    assert json.loads(raw.read_text()) == invalid
    with pytest.raises(SceneError):
        load_scene(raw)
    crashed.shutdown()

    win = make_window()
    win.confirm_restore = RestorePrompt(RecoveryAnswer.RESTORE)
    assert win.offer_recovery()
    assert win.doc.data == invalid
    assert win.doc.is_dirty
    problems = win.properties.problems
    assert problems.isVisibleTo(win.properties)
    assert "bodies[0].mass" in problems.text() and "bodies[0].colour" in problems.text()
    win.doc.select(("bodies", 0))
    assert win.properties.isEnabled()


def test_a_killed_process_leaves_its_scene_for_the_next_start(
    qtbot, make_window, recovery_dir: Path, scene_file: Path
) -> None:
    script = textwrap.dedent(
        f"""
        import os
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from PySide6.QtWidgets import QApplication
        from impactgui.commands import SetProperty
        from impactgui.mainwindow import MainWindow
        from impactgui.recovery import RecoveryStore
        app = QApplication([])
        win = MainWindow(recovery=RecoveryStore({str(recovery_dir)!r}))
        assert win.open_file({str(scene_file)!r})
        win.doc.push(SetProperty(win.doc, ("title",), "before the crash"))
        assert win.autosave()
        os._exit(9)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 9, result.stderr
    assert list(recovery_dir.glob("*.lock"))  # the dead process's lock is left behind
    win = make_window()
    win.confirm_restore = RestorePrompt(RecoveryAnswer.RESTORE)
    assert win.offer_recovery()
    assert win.doc.data["title"] == "before the crash"
    assert win.doc.path is None and win.doc.is_dirty


def test_a_solver_error_leaves_the_scene_untouched_and_editable(
    qtbot, make_window, recovery_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_make_stepper = mainwindow_module.make_stepper
    monkeypatch.setattr(
        mainwindow_module,
        "make_stepper",
        lambda scene: FailingStepper(real_make_stepper(scene), good_steps=40, mode="raise"),
    )
    win = make_window()
    win.autosave_timer.setInterval(60_000)  # only the run start autosaves
    assert win.open_file(scene_path("wheel_curb_e03"))
    win.doc.push(SetProperty(win.doc, ("title",), "about to fail"))
    before = copy.deepcopy(win.doc.data)
    run_to_end(qtbot, win)
    assert [json.loads(f.read_text()) for f in _recovery_files(recovery_dir)] == [before]
    assert win.run_state == "failed"
    assert win.doc.data == before and win.doc.is_dirty
    assert len(win.runner.trajectory) >= 40
    assert win.export_csv(tmp_path / "out") == tmp_path / "out"
    assert (tmp_path / "out" / "trajectory.csv").stat().st_size > 0
    win.reset_run()
    assert win.canvas.editing_enabled and win.properties.isEnabled()
    assert win.canvas.try_push(SetProperty(win.doc, ("bodies", 0, "mass"), 3.0))
    assert win.doc.data["bodies"][0]["mass"] == 3.0
    assert win.save_as(tmp_path / "kept.json")
    assert load_scene(tmp_path / "kept.json").title == "about to fail"


@pytest.mark.parametrize(
    ("button", "answer"),
    [
        ("Restore", RecoveryAnswer.RESTORE),
        ("Discard", RecoveryAnswer.DISCARD),
        ("Not now", RecoveryAnswer.LATER),
    ],
)
def test_the_recovery_dialog_names_the_scene_and_maps_its_buttons(
    qtbot, make_window, scene_file: Path, button: str, answer: RecoveryAnswer
) -> None:
    win = make_window()
    recovered = RecoveredScene(
        data={"title": "Lost ball"},
        original_path=scene_file,
        title="Lost ball",
        saved_at=datetime.now(UTC),
        scene_file=scene_file.with_suffix(SCENE_SUFFIX),
    )
    seen: list[str] = []

    def click() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(f"{box.text()} {box.informativeText()}")
        (chosen,) = [b for b in box.buttons() if b.text().replace("&", "") == button]
        chosen.click()

    QTimer.singleShot(0, click)
    assert win._ask_restore(recovered) == answer
    assert "Lost ball" in seen[0] and str(scene_file) in seen[0]


def test_a_damaged_autosave_is_refused_with_the_reason_and_kept(
    qtbot, make_window, recovery_dir: Path, scene_file: Path
) -> None:
    crashed = make_window()
    assert crashed.open_file(scene_file)
    _edited(qtbot, crashed, recovery_dir)
    crashed.shutdown()
    (raw,) = _recovery_files(recovery_dir)
    damaged = json.loads(raw.read_text())
    damaged["bodies"].append(7)  # a hand edit of the autosave: a body that is not an object
    raw.write_text(json.dumps(damaged))

    win = make_window()
    before = copy.deepcopy(win.doc.data)
    win.confirm_restore = RestorePrompt(RecoveryAnswer.RESTORE)
    assert not win.offer_recovery()
    assert win.doc.data == before  # the window's scene is untouched
    assert "bodies[1]: must be an object, got 7" in win.statusBar().currentMessage()
    assert _recovery_files(recovery_dir) == []  # never offered again
    (kept,) = recovery_dir.glob("*.damaged-*[0-9].json")  # renamed aside, to mend by hand
    assert json.loads(kept.read_text()) == damaged
    for box in win.findChildren(QMessageBox):
        box.close()
