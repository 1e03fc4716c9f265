"""The linear command-line splitter gives exactly what `shlex.split` gives — the same words,
or a `ValueError` with the same message — on hand-picked lines and on many random ones built
from the characters that matter (quotes, backslashes, whitespace), and stays linear on long
lines where shlex is quadratic."""

from __future__ import annotations

import random
import shlex

import pytest

from lockstep.domain.command_line import split_command_line

LINES = [
    "",
    " ",
    " \t\r\n ",
    "python3",
    "python3 -c 'import os; print(os.environ[\"RANK\"])'",
    "-x my-script.py",
    "a  b\tc\nd\re",
    "''",
    '""',
    "'' \"\" x",
    "a''b",
    'a""b',
    "'a b' \"c d\"",
    "'it''s'",
    '"it\'s"',
    "'\"'",
    '"\'"',
    "a\\ b",
    "\\'",
    '\\"',
    "\\\\",
    "\\\n",
    "a\\\nb",
    '"a\\"b"',
    '"a\\\\b"',
    '"a\\b"',
    '"a\\$b"',
    '"\\n"',
    "'a\\b'",
    "'a\\'",
    "# not a comment",
    "a#b",
    "é ü 日本 \u00a0 x",
    "x\x0by",
    "--flag=\"a b\" --other='c d' plain",
    "'unterminated",
    '"unterminated',
    "trailing\\",
    '"ends in escape\\',
    "a 'b",
    'a "b\\"',
]


def outcome(split: object, line: str) -> tuple[str, object]:
    try:
        return "words", split(line)  # type: ignore[operator]
    except ValueError as error:
        return "error", str(error)


@pytest.mark.parametrize("line", LINES)
def test_each_line_splits_as_shlex_splits_it(line: str) -> None:
    assert outcome(split_command_line, line) == outcome(shlex.split, line)


def test_random_lines_split_as_shlex_splits_them() -> None:
    alphabet = ["a", "b", "-", "=", "'", '"', "\\", " ", "\t", "\n", "\r", "$", "#", "é", "\x0b"]
    weights = [8, 4, 2, 1, 3, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1]
    generator = random.Random(20261201)
    errors = 0
    for _ in range(20_000):
        line = "".join(generator.choices(alphabet, weights, k=generator.randint(0, 24)))
        expected = outcome(shlex.split, line)
        errors += expected[0] == "error"
        assert outcome(split_command_line, line) == expected, repr(line)
    assert 1_000 < errors < 19_000  # both kinds of outcome were exercised


def test_quoted_lines_of_words_split_as_shlex_splits_them() -> None:
    generator = random.Random(7)
    for _ in range(2_000):
        words = [
            "".join(generator.choices("ab '\"\\$\t\n", k=generator.randint(0, 8)))
            for _ in range(generator.randint(0, 6))
        ]
        line = shlex.join(words)
        assert split_command_line(line) == shlex.split(line) == words


def test_a_long_line_splits_in_linear_time() -> None:
    # shlex, quadratic in a word's length, would take hours on this line and the suite's
    # timeout would end the test; a linear split takes milliseconds. No timing is asserted.
    word = "x" * 2_000_000
    line = f"{word} '{word}' \"{word}\" {word}\\ {word}"
    words = split_command_line(line)
    assert [len(w) for w in words] == [2_000_000, 2_000_000, 2_000_000, 4_000_001]
