"""Plain text as Markdown that `inspect view` shows as written, line for line.

The viewer renders a score's explanation and (in the sample list and header) its answer as
Markdown: markdown-it, a newline kept as a line break, `<>&'"` HTML-escaped before parsing,
TeX math when the text holds a `$`. Unescaped, `2*0.875^4 - 1 ... nDCG*` lost its stars to
italics, `$40 but has $41.99` could typeset as math and a line starting `1.` became a list
item. So every character that Markdown would read as syntax where it stands is
backslash-escaped (CommonMark lets any ASCII punctuation be), and nothing else: not the
characters the viewer HTML-escapes itself (an escaped `&` would show its entity), not an
underscore inside a word (`order_id` cannot open emphasis), not a bracket that cannot end a
link. An answer's JSON thus usually passes unchanged, which matters where the viewer shows
it as plain text (the scoring tab). `from_markdown` undoes the escaping.
"""

from __future__ import annotations

import re

#: Syntax wherever it stands: escapes, code, emphasis, math, strikethrough, tables; an
#: underscore that touches a non-word character; a `]` that would close a link or its label.
_INLINE = re.compile(r"[\\`*$~|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|\](?=[(\[:])")
#: Indentation: no-break spaces, so that four spaces do not start a code block.
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)
#: What starts a block when it opens a line: headings, list items, setext underlines, rules.
_LINE_START = re.compile(r"^(\u00a0*)([#+\-=]|\d+[.)])", re.MULTILINE)
_ESCAPED = re.compile(r"\\([\\`*$~|_\]#+\-=.)])")


def to_markdown(text: str) -> str:
    """`text` escaped so that the viewer shows it exactly, each of its lines on a line of its own."""
    escaped = _INDENT.sub(lambda m: "\u00a0" * len(m[0]), _INLINE.sub(lambda m: "\\" + m[0], text))
    return _LINE_START.sub(lambda m: m[1] + m[2][:-1] + "\\" + m[2][-1], escaped)  # "1." -> "1\.", "-" -> "\-"


def from_markdown(markdown: str) -> str:
    """The text `to_markdown` was given (its indentation as no-break spaces)."""
    return _ESCAPED.sub(r"\1", markdown)
