"""tools.complexity, the cyclomatic complexity check of ``make lint``: every function over 15 is
named, methods and nested functions included, and one at 15 passes."""
from __future__ import annotations

from tools import complexity


def _function(name: str, decisions: int, indent: str = "") -> str:
    """A function of complexity ``decisions + 1`` (one ``if`` per decision)."""
    lines = [f"{indent}def {name}(x):"] + [f"{indent}    if x == {n}:\n{indent}        return {n}"
                                           for n in range(decisions)]
    return "\n".join(lines + [f"{indent}    return None", ""])


def test_complexity_names_every_function_over_the_limit(tmp_path):
    source = tmp_path / "module.py"
    source.write_text("\n".join([
        _function("at_limit", 14),
        _function("over", 15),
        "class Rules:",
        _function("method_over", 20, indent="    "),
        "def outer(x):",
        _function("inner_over", 16, indent="    "),
        "    return inner_over(x)",
        "",
    ]), encoding="utf-8")

    found = complexity.offenders([str(tmp_path)])

    assert [(offender.name, offender.complexity) for offender in found] == [
        ("Rules.method_over", 21), ("inner_over", 17), ("over", 16)]
    assert all(offender.path == str(source) for offender in found)


def test_complexity_main_fails_listing_offenders_and_passes_clean_code(tmp_path, capsys):
    clean, complex_ = tmp_path / "clean.py", tmp_path / "complex.py"
    clean.write_text(_function("small", 3), encoding="utf-8")
    complex_.write_text(_function("big", 16), encoding="utf-8")

    assert complexity.main([str(clean)]) == 0
    assert capsys.readouterr().err == ""
    assert complexity.main([str(clean), str(complex_)]) == 1
    assert f"{complex_}:1 big 17" in capsys.readouterr().err
