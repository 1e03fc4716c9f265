"""A command line split into words as `shlex.split` splits it (POSIX rules, no comments), in
time linear in its length.

`shlex` builds each word one character at a time by string concatenation, which is quadratic
in the word's length: a 1 MB `args` took seconds. This splitter takes whole runs of ordinary
characters at once and joins each word's pieces once. Its results and its errors (`ValueError`
with shlex's messages, "No closing quotation" and "No escaped character") are shlex's, which
the unit tests check on many inputs. Used by the request rules (a command line that does not
split is refused) and by both runtimes to turn `command` and `args` into an argv.
"""

from __future__ import annotations

import re

_WHITESPACE = " \t\r\n"
_WHITESPACE_RUN = re.compile(r"[ \t\r\n]+")
_PLAIN_RUN = re.compile(r"[^ \t\r\n'\"\\]+")
"""Characters that stand for themselves outside quotes."""
_DOUBLE_QUOTED_RUN = re.compile(r'[^"\\]+')
"""Characters that stand for themselves inside double quotes."""
_ESCAPABLE_IN_DOUBLE_QUOTES = '"\\'
"""Inside double quotes a backslash escapes only these; before anything else it is kept."""

NO_CLOSING_QUOTATION = "No closing quotation"
NO_ESCAPED_CHARACTER = "No escaped character"


def split_command_line(text: str) -> list[str]:
    """The words of `text`, as `shlex.split(text)` returns them; `ValueError` when a quote is
    not closed or the text ends in a backslash."""
    words: list[str] = []
    pieces: list[str] = []
    in_word = False
    position, end = 0, len(text)
    while position < end:
        character = text[position]
        if character in _WHITESPACE:
            if in_word:
                words.append("".join(pieces))
                pieces.clear()
                in_word = False
            position = _end_of(_WHITESPACE_RUN, text, position)
            continue
        in_word = True
        if character == "'":
            closing = text.find("'", position + 1)
            if closing < 0:
                raise ValueError(NO_CLOSING_QUOTATION)
            pieces.append(text[position + 1 : closing])
            position = closing + 1
        elif character == '"':
            position = _double_quoted(text, position + 1, pieces)
        elif character == "\\":
            if position + 1 >= end:
                raise ValueError(NO_ESCAPED_CHARACTER)
            pieces.append(text[position + 1])
            position += 2
        else:
            run_end = _end_of(_PLAIN_RUN, text, position)
            pieces.append(text[position:run_end])
            position = run_end
    if in_word:
        words.append("".join(pieces))
    return words


def _double_quoted(text: str, position: int, pieces: list[str]) -> int:
    """Append what the double-quoted part starting at `position` (just past its opening quote)
    stands for; the position just past its closing quote."""
    end = len(text)
    while True:
        run_end = _end_of(_DOUBLE_QUOTED_RUN, text, position)
        if run_end > position:
            pieces.append(text[position:run_end])
            position = run_end
        if position >= end:
            raise ValueError(NO_CLOSING_QUOTATION)
        if text[position] == '"':
            return position + 1
        # A backslash inside double quotes.
        if position + 1 >= end:
            raise ValueError(NO_ESCAPED_CHARACTER)
        escaped = text[position + 1]
        if escaped not in _ESCAPABLE_IN_DOUBLE_QUOTES:
            pieces.append("\\")
        pieces.append(escaped)
        position += 2


def _end_of(run: re.Pattern[str], text: str, position: int) -> int:
    """Where the run of `run`'s characters starting at `position` ends (`position` if none)."""
    match = run.match(text, position)
    return position if match is None else match.end()
