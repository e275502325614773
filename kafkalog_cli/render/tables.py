"""Tables that never cut a number or a name.

Numbers, offsets, partition numbers and topic names are never ellipsised or folded: their
columns are as wide as their widest cell. Paths and free text fold (wrap anywhere) into
what is left. When even that does not fit the terminal, the table is drawn vertically
instead: one line per row, its first cell then ``column=value`` pairs, wrapped between
pairs (never inside a number or a name).
"""

from __future__ import annotations

from dataclasses import dataclass

#: column kinds: "whole" cells are never cut (numbers, offsets, ids, topic names); "wrap"
#: cells wrap between words, never inside one (a verdict, a list of codecs); "fold" cells
#: wrap anywhere (paths, messages)
WHOLE, WRAP, FOLD = "whole", "wrap", "fold"
#: the narrowest a folding column gets before the vertical layout is used
MIN_FOLD_WIDTH = 12


@dataclass(frozen=True)
class Column:
    header: str
    kind: str = WHOLE
    justify: str = "right"


def _plain(cell) -> str:
    from rich.text import Text

    return cell.plain if isinstance(cell, Text) else str(cell)


def _cell_width(cell) -> int:
    from rich.text import Text

    if isinstance(cell, Text):
        return max((len(line) for line in cell.plain.split("\n")), default=0)
    return max((len(line) for line in str(cell).split("\n")), default=0)


def render_table(console, columns: list[Column], rows: list[list], *, title=None,
                 box=None) -> None:
    """Print ``rows`` (cells: str or rich Text, already terminal-safe) under
    ``columns`` on ``console``: a table whose whole columns keep every cell whole, or the
    vertical layout when the whole columns alone (plus the narrowest folding columns)
    are wider than the console."""
    from rich import box as boxes
    from rich.table import Table
    from rich.text import Text

    box = box or boxes.SIMPLE_HEAD
    widths = []
    for i, col in enumerate(columns):
        cells = [_cell_width(r[i]) for r in rows]
        longest = max(cells, default=0)
        if col.kind == WHOLE:
            # a header wraps at its spaces; its longest word must fit
            widths.append(max([longest, *map(len, col.header.split())]))
        elif col.kind == WRAP:
            words = [len(w) for r in rows for w in _plain(r[i]).split()]
            widths.append(max([*words, *map(len, col.header.split()), 1]))
        else:
            widths.append(min(max(longest, 1), MIN_FOLD_WIDTH))
    t = Table(title=title, title_justify="left", box=box)
    for col, w in zip(columns, widths, strict=True):
        # headers wrap at their spaces; a whole cell never wraps (Text.no_wrap wins over
        # the column's), a folding one folds
        t.add_column(Text(col.header, justify=col.justify), justify=col.justify,
                     min_width=w, overflow="fold")
    for r in rows:
        cells = []
        for col, c in zip(columns, r, strict=True):
            c = c.copy() if isinstance(c, Text) else Text(str(c))
            if col.kind == WHOLE:
                c.no_wrap = True
            cells.append(c)
        t.add_row(*cells)
    # the narrowest the table can be: whole cells, the longest header words, padding and
    # column separators (rich's own measure)
    if t.__rich_measure__(console, console.options).minimum > console.width:
        _vertical(console, columns, rows, title)
        return
    console.print(t, soft_wrap=False)


def _vertical(console, columns: list[Column], rows: list[list], title) -> None:
    """One record per row: its first cell, then ``column=value`` pairs packed onto lines
    of the console's width, a line breaking only between pairs (continuation lines
    indented by 2); a pair wider than a line on its own is folded."""
    from rich.text import Text

    if title is not None:
        console.print(title if isinstance(title, Text) else Text(str(title), style="bold"))
    for r in rows:
        first = (r[0] if isinstance(r[0], Text) else Text(str(r[0]))).copy()
        first.stylize("bold", 0, len(first))
        atoms = [first]
        for col, cell in zip(columns[1:], r[1:], strict=True):
            pair = Text(col.header.replace(" ", "-") + "=", style="dim")
            pair.append_text(cell if isinstance(cell, Text) else Text(str(cell)))
            atoms.append(pair)
        for line in pack_atoms(atoms, console.width):
            console.print(line, overflow="fold", soft_wrap=False, no_wrap=False)


def pack_atoms(atoms: list, width: int, *, sep: str = "  ", indent: int = 2) -> list:
    """Rich ``Text`` atoms joined by ``sep`` onto lines at most ``width`` cells wide, a
    line breaking only between atoms; continuation lines start with ``indent`` spaces. An
    atom wider than a line gets a line of its own (the console folds it)."""
    from rich.text import Text

    lines: list = []
    line = None
    for atom in atoms:
        if line is None:
            line = Text()
            line.append_text(atom)
            continue
        if line.cell_len + len(sep) + atom.cell_len <= width:
            line.append(sep)
            line.append_text(atom)
            continue
        lines.append(line)
        line = Text(" " * indent)
        line.append_text(atom)
    if line is not None:
        lines.append(line)
    return lines
