"""``python -m solver papers``: every paper's table rows against the papers' own values.

Expected values are written here from the papers (fractions, printed
formulas evaluated with the papers' parameters, or closed forms derived in
the test), never copied from the program's output.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from scipy.optimize import brentq

from solver import cli
from solver.papers.common import TABLE_COLUMNS

PAPERS = ("000", "001", "002", "003", "004")


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("papers")
    stderr = io.StringIO()
    assert cli.main(["papers", "--out", str(folder)], stderr=stderr) == 0, stderr.getvalue()
    return folder


def table(out: Path, number: str) -> list[dict[str, str]]:
    with (out / f"paper-{number}" / "table.csv").open(newline="") as stream:
        return list(csv.DictReader(stream))


def computed(rows, item_start: str, quantity: str) -> float:
    (row,) = [r for r in rows if r["item"].startswith(item_start) and r["quantity"] == quantity]
    return float(row["computed"])


def row_of(rows, item_start: str, quantity: str) -> dict[str, str]:
    (row,) = [r for r in rows if r["item"].startswith(item_start) and r["quantity"] == quantity]
    return row


def test_every_table_has_the_columns_and_every_printed_value_matches_or_has_a_note(out):
    for number in PAPERS:
        path = out / f"paper-{number}" / "table.csv"
        with path.open(newline="") as stream:
            header = next(csv.reader(stream))
        assert header == list(TABLE_COLUMNS)
        rows = table(out, number)
        assert rows, number
        for row in rows:
            if row["printed"] and row["computed"]:
                printed, value = float(row["printed"]), float(row["computed"])
                assert float(row["difference"]) == pytest.approx(value - printed, abs=1e-15)
                if abs(value - printed) > 1e-9 * max(1.0, abs(printed)):
                    assert row["note"], (number, row)
            else:
                assert row["computed"] or row["note"], (number, row)


def test_paper_000_examples_against_the_printed_fractions(out):
    rows = table(out, "000")
    # ex. 1: v(t+0) = V[−1/3, 2/3, 2/3], Gᵀv(t+0) = V[1, 0, 4/3]
    for k, value in enumerate((-1 / 3, 2 / 3, 2 / 3)):
        assert computed(rows, "ex. 1", f"v_plus[{k}]") == pytest.approx(value, abs=1e-15)
    assert computed(rows, "ex. 1", "GT_v_plus[2]") == pytest.approx(4 / 3, abs=1e-15)
    # ex. 2: the one-stage answer Gᵀv = [1, 0, −1/3] is inadmissible
    assert computed(rows, "ex. 2", "GT_v_plus[2]") == pytest.approx(-1 / 3, abs=1e-15)
    assert computed(rows, "ex. 2", "admissible (1 yes, 0 no)") == 0.0
    # ex. 3: w_1 = [−1/3, 5/9, 5/9, 5/9], λ^(1) = [0, 1/9, 2/9], λ (29) = [4/3, 8/9, 4/9]
    for k, value in enumerate((-1 / 3, 5 / 9, 5 / 9, 5 / 9)):
        assert computed(rows, "ex. 3 (staged)", f"w_1[{k}]") == pytest.approx(value, abs=1e-15)
    for k, value in enumerate((0.0, 1 / 9, 2 / 9)):
        got = computed(rows, "ex. 3 (staged)", f"lambda^(1)[{k}]")
        assert got == pytest.approx(value, abs=1e-15)
    for k, value in enumerate((4 / 3, 8 / 9, 4 / 9)):
        got = computed(rows, "ex. 3 (staged)", f"lambda (29)[{k}]")
        assert got == pytest.approx(value, abs=1e-14)
    for k, value in enumerate((-1 / 3, 4 / 9, 4 / 9, 7 / 9)):
        got = computed(rows, "ex. 3 (run four_balls)", f"v_plus[{k}]")
        assert got == pytest.approx(value, abs=1e-14)
    # ex. 4: the paper prints λ₂ = 1/3; its formula (z + √(4z − 3z²))/2 at z = 4/3 gives 2/3
    slip = row_of(rows, "ex. 4 staged", "lambda[1]")
    assert float(slip["printed"]) == pytest.approx(1 / 3)
    assert float(slip["computed"]) == pytest.approx(2 / 3, abs=1e-15)
    assert "1/3" in slip["note"]
    assert computed(rows, "ex. 4 family", "z min") == pytest.approx(1.0, abs=1e-12)
    assert computed(rows, "ex. 4 family", "z max") == pytest.approx(4 / 3, abs=1e-12)


def test_paper_001_velocities_after_the_impulse(out):
    rows = table(out, "001")
    S, m, r, l, w = 1.0, 1.0, 0.1, 0.1, math.pi / 2  # the bundled axle_cart scene
    item = "example, after the impulse"
    assert computed(rows, item, "xC_dot") == pytest.approx(
        math.sqrt(2) / 8 * S / m - math.sqrt(2) / 2 * l * w, abs=1e-12
    )
    y = row_of(rows, item, "yC_dot")
    # the paper's −√2/2·lω is its slip; its constraints give +√2/2·lω
    assert float(y["printed"]) == pytest.approx(-math.sqrt(2) / 8 - math.sqrt(2) / 2 * l * w)
    assert float(y["computed"]) == pytest.approx(
        -math.sqrt(2) / 8 * S / m + math.sqrt(2) / 2 * l * w, abs=1e-12
    )
    assert y["note"]
    assert computed(rows, item, "thetaA_dot") == pytest.approx(-S / (4 * m * r), abs=1e-12)
    assert computed(rows, item, "thetaB_dot") == pytest.approx(-S / (4 * m * r) + 2 * w, abs=1e-12)
    assert computed(rows, "ΔP", "φ coefficient / (m r²)") == pytest.approx(17 / 6, abs=1e-14)


def _first_impact_of_paper_002() -> tuple[float, float, float]:
    """Free oscillators X(0) = [−0.3, 0.3], V(0) = [−1, 1] to x₂ = x₁; returns t, v₁, v₂."""
    w1, w2 = math.sqrt(8000 / 200), math.sqrt(8000 / 100)

    def x1(t):
        return -0.3 * math.cos(w1 * t) - math.sin(w1 * t) / w1

    def x2(t):
        return 0.3 * math.cos(w2 * t) + math.sin(w2 * t) / w2

    t = brentq(lambda s: x2(s) - x1(s), 0.05, 0.35, xtol=1e-15)
    v1 = 0.3 * w1 * math.sin(w1 * t) - math.cos(w1 * t)
    v2 = -0.3 * w2 * math.sin(w2 * t) + math.cos(w2 * t)
    return t, v1, v2


def test_paper_002_first_impacts_of_both_cases(out):
    rows = table(out, "002")
    t, v1, v2 = _first_impact_of_paper_002()
    mu = 200 * 100 / 300
    for label, e in (("plastic", 0.0), ("elastic", 1.0)):
        assert computed(rows, f"{label}, β = {e:g}, closed", "t impact 1, s") == pytest.approx(
            t, abs=1e-12
        )
        impulse = computed(rows, f"{label}, β = {e:g}, closed", "impulse 1, N·s")
        assert impulse == pytest.approx((1 + e) * mu * (v1 - v2), rel=1e-12)
    common = (200 * v1 + 100 * v2) / 300
    assert computed(rows, "plastic, β = 0, closed", "v2 after impact 1, m/s") == pytest.approx(
        common, abs=1e-12
    )


def test_paper_003_periods_impulses_and_slips(out):
    rows = table(out, "003")
    lam = 10.0
    assert computed(rows, "(40)", "period T = 2(x₁ − x₂)/V₁, s") == pytest.approx(2.0, abs=1e-12)
    assert computed(rows, "(46)", "period T = π/λ, s") == pytest.approx(math.pi / lam, abs=1e-12)
    assert computed(rows, "(46)", "amplitude V/λ, m") == pytest.approx(0.1, abs=1e-12)
    # (44) at x₁ = 0.05 m with V the speed of arrival: (2/λ)(π − arctan 2)
    T44 = row_of(rows, "(44) spring and stop at x₁ = 0.05", "period T, s")
    assert float(T44["computed"]) == pytest.approx(0.2 * (math.pi - math.atan(2.0)), abs=1e-12)
    assert T44["note"]
    near = row_of(rows, "(44) stop at x₁ = −0.05", "period T, s")
    assert float(near["computed"]) == pytest.approx(0.2 * math.atan(2.0), abs=1e-12)
    assert near["note"]
    assert computed(rows, "(29)", "energy lost (1 − R²)/2 m ẋ²(T), J") == pytest.approx(
        (1 - 0.25) / 2, abs=1e-12
    )
    postulate = row_of(rows, "(17)", "kτ²/(2m) with τ = π/λ")
    assert float(postulate["computed"]) == pytest.approx(math.pi**2 / 2, rel=1e-14)
    assert postulate["note"]
    # (10)-(12): the elastic stop, k = 100 N/m, m = 1 kg, V = 1 m/s: a half sine of
    # λ = √(k/m) = 10 1/s lasting π/λ, leaving at −V, its crest V√(km) = 10 N
    stop = "(10) elastic stop"
    assert computed(rows, stop, "contact time τ = π/λ, s") == pytest.approx(math.pi / 10, abs=1e-9)
    assert computed(rows, stop, "velocity after ẋ(T + τ), m/s") == pytest.approx(-1.0, abs=1e-9)
    peak = computed(rows, stop, "peak force V√(km), N")
    assert 10.0 * (1 - 1e-3) < peak <= 10.0 * (1 + 1e-12)


def test_paper_004_first_impact_and_point_b(out):
    rows = table(out, "004")
    m, J, r, g, mu = 10.0, 0.05, 0.1, 9.81, 0.4
    t1 = (-3.0 + math.sqrt(9.0 + 2 * g * 0.1)) / g
    vy = -3.0 - g * t1
    lam = -m * vy
    item = "first impact, β = 0 "
    assert computed(rows, item, "t, s") == pytest.approx(t1, abs=1e-12)
    assert computed(rows, item, "normal impulse (1 + β)λ̃, N·s") == pytest.approx(lam, rel=1e-12)
    # sliding through the impact (|v_t| = 5 > (1/m + r²/J) μ λ̃): friction μλ̃ along +x
    assert 5.0 > (1 / m + r * r / J) * mu * lam
    assert computed(rows, item, "ẋ after, m/s") == pytest.approx(-5 + mu * lam / m, abs=1e-12)
    assert computed(rows, item, "φ̇ after, rad/s") == pytest.approx(mu * lam * r / J, rel=1e-12)
    item = "first impact, β = 0.3"
    assert computed(rows, item, "normal impulse (1 + β)λ̃, N·s") == pytest.approx(
        1.3 * lam, rel=1e-12
    )
    assert computed(rows, item, "ẏ after, m/s") == pytest.approx(-0.3 * vy, rel=1e-12)
    # the restitution phase ends rolling: ẋ + r φ̇ = 0
    x_after = computed(rows, item, "ẋ after, m/s")
    assert x_after + r * computed(rows, item, "φ̇ after, rad/s") == pytest.approx(0.0, abs=1e-12)
    # point B spinning backwards: the floor carries mg, friction drives the wheel off (+x)
    b = "point B, φ̇ < 0"
    assert computed(rows, b, "floor force λ₂, N") == pytest.approx(m * g, rel=1e-12)
    x_dd = row_of(rows, b, "ẍ, m/s²")
    assert float(x_dd["computed"]) == pytest.approx(mu * g, rel=1e-9)
    assert float(x_dd["printed"]) == pytest.approx(-mu * g) and x_dd["note"]
    assert computed(rows, b, "φ̈, rad/s²") == pytest.approx(mu * m * g * r / J, rel=1e-9)


def test_figures_are_png_and_svg_named_by_the_papers_numbers_and_shown_in_index(out):
    index = (out / "index.html").read_text(encoding="utf-8")
    expected = {
        "000": ["example-4-family"],
        "002": ["slide-plastic-displacements", "slide-elastic-impulses"],
        "003": ["fig-4-5-rigid-stop", "fig-10-11-spring-stop"],
        "004": ["fig-10-positions-beta-0", "fig-12-paths", "fig-13-time-responses",
                "fig-14-time-responses"],
    }  # fmt: skip
    for number, stems in expected.items():
        for stem in stems:
            for fmt in ("png", "svg"):
                path = out / f"paper-{number}" / f"{stem}.{fmt}"
                assert path.is_file() and path.stat().st_size > 1000, path
            assert f'src="paper-{number}/{stem}.png"' in index
    svg = (out / "paper-004" / "fig-13-time-responses.svg").read_text(encoding="utf-8")
    assert "fig. 13" in svg  # the paper's figure number in the title
    for number in PAPERS:
        assert f'href="paper-{number}/table.csv"' in index


def test_bad_paper_and_bad_out_exit_2_naming_them(tmp_path):
    stderr = io.StringIO()
    assert cli.main(["papers", "005", "--out", str(tmp_path)], stderr=stderr) == 2
    assert stderr.getvalue().startswith("PAPER:")
    file = tmp_path / "a_file"
    file.write_text("x")
    stderr = io.StringIO()
    assert cli.main(["papers", "000", "--out", str(file)], stderr=stderr) == 2
    assert stderr.getvalue().startswith("--out:")
